"""Load agents: the engine run on cluster hosts, controlled by the module."""
