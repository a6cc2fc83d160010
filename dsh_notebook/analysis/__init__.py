"""Analysis of session logs: what a session did, how long it took, what it cost, and how two
sessions compare — folds over the events of :mod:`dsh_notebook.session`, never writers of them.

- :mod:`.stats` (``show --stats``, the cell's summary line, the widgets' figures, OTel's times)
  with its typed figures in :mod:`.stats_model` and its text table in :mod:`.stats_view`;
- :mod:`.compare` (``compare A B``, the compare widget) over the turn alignment of :mod:`.align`.
"""
