"""The dashboard's pages, one module per part: the tree, and what grows around it."""
