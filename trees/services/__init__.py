"""State changes of clusters and trees, one module per use case (each one transaction)."""
