"""Fidelity suites: expected figures derived from the seed texts alone."""
