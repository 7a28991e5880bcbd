"""Pure functions from IR to counts, traffic, intensity."""
