"""Exchange rates, loaded at import."""

BASE = {"EUR": 1.0, "USD": 1.1}


def load(table):
    return {k: 1 / v for k, v in table.items()}


INVERSE = load({"EUR": 1.0, "XXX": 0})
