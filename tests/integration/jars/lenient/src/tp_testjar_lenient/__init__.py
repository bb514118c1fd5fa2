"""Test-only skilljar package: data only."""
