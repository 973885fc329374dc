"""Parsers for predict / validate / report (filled in with the model)."""


def add_parsers(sub) -> None:
    pass
