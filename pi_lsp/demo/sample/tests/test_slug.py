import unittest

from textkit import slugify


class SlugifyTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_accents_are_folded(self):
        self.assertEqual(slugify("Crème Brûlée"), "creme-brulee")

    def test_no_dashes_at_the_ends(self):
        self.assertEqual(slugify("  Hello, World!  "), "hello-world")


if __name__ == "__main__":
    unittest.main()
