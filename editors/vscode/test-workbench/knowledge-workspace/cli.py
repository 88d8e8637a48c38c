from greeting import greet


def main():
    return greet("cli")
