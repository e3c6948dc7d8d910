"""A target's one name: what pages, charts, exports and the terminal call a run's target."""


def target_name(provider_name, label):
    """'provider/label': the label is the model and its params (or the name given) and unique in
    its run, the provider says whose model it is. The one place this is made, so two profiles of
    one model never read differently here and there."""
    return f"{provider_name}/{label}" if provider_name else str(label)
