"""Provider adapters: one module per wire format behind one small interface (interface.py),
mapped from a provider's type by registry.py; what each format can do, with no HTTP: formats.py."""
