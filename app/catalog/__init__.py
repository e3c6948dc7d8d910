"""What a person sets up: providers, prices, tasks, collections, templates, defaults."""
