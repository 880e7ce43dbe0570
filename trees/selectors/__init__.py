"""Read queries over clusters and trees, one module per use case."""
