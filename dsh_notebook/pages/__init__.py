"""A session's log read a page at a time, for the inspector (issue 38 item 1): the index of one
session (:mod:`.indexed`), the rows, facets and export (:mod:`.rows`), the stats, timeline and a
turn (:mod:`.stats`), a request diff and the messages at a seq (:mod:`.requests`), and the event
query language they share with ``show --search`` and ``sessions --search`` (:mod:`.query`).

Pure reads of the stored events, blocking: the host serves them (``session/page``) off its loop.
"""
