"""Settings under test: toggles rgwbench reads, plans, applies, verifies and puts back."""
