"""Runs: profiles applied variant by variant, measured and put back."""
