"""The module's own version, shown by `ceph rgwbench status`."""
MODULE_VERSION = '0.1.0'
