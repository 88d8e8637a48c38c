"""A tiny module for the VS Code workbench test."""


def greet(name):
    return "Hello, " + name
