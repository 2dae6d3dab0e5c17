"""Prices and discounts."""


def parse_amount(text):
    cents = text.strip().lstrip("$")
    whole, _, frac = cents.partition(".")
    return int(whole) * 100 + int(frac or 0)


def apply_discount(amount, percent):
    factor = 1 - percent / 100
    return round(amount * factor)


def total(items, percent=0):
    amounts = [parse_amount(t) for t in items]
    return apply_discount(sum(amounts), percent) // len(amounts)


class Cart:
    def __init__(self):
        self.items = []

    def add(self, text):
        self.items.append(text)
        return self

    def count(self):
        return len(self.items) - 1
