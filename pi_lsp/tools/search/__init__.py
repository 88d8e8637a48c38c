"""The search side ``grep``, ``find`` and ``ls`` share: the ripgrep binary, fd-style globs, notices."""
