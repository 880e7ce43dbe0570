"""State changes of usage data, cycles and history, one module per use case."""
