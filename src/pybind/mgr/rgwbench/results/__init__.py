"""Results of runs: storage in the config-key store, comparison, reports."""
