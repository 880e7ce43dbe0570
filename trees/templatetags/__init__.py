"""Template filters of the trees app."""
