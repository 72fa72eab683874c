"""The rgwbench web panel: runs, tables and charts in the browser, served by the module."""
