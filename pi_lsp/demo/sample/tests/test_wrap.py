import unittest

from textkit import shorten


class ShortenTest(unittest.TestCase):
    def test_short_text_unchanged(self):
        self.assertEqual(shorten("abc", 5), "abc")

    def test_long_text_cut(self):
        self.assertEqual(shorten("abcdefgh", 5), "abcd…")


if __name__ == "__main__":
    unittest.main()
