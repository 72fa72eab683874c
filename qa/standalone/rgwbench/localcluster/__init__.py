"""The local test cluster behind `qa/standalone/rgwbench/cluster`."""
