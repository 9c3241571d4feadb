"""The items of a parenthesized list in a path -- a kept call's arguments, a tuple's places,
the arguments a :class:`~indexgen.analyze.paths.Given` keeps -- are read by one parser
(``paths._items``).  Every expected tuple is written by hand from the grammar in
:func:`indexgen.analyze.paths.parse`'s and :func:`~indexgen.analyze.paths.arguments`'
docstrings.
"""

from __future__ import annotations

from indexgen.analyze.paths import Given, arguments, parse


def test_a_kept_call_and_a_tuple_list_their_items():
    assert parse("next(a.b, _)") == (("n", "next"), ("c", ((("n", "a"), ("a", "b")), None)))
    assert parse('getattr(x, "on_*")') == (("n", "getattr"), ("c", ((("n", "x"),),
                                                                    (("q", "on_*"),))))
    assert parse("(a, _)") == (("u", ((("n", "a"),), None)),)
    assert parse("(a, (b, _))[0]") == (("u", ((("n", "a"),), ((("u", ((("n", "b"),), None)),)))),
                                       ("i", 0))
    # a dict literal's stated keys hold a "=": no keyword argument
    assert parse('next({"k"=a}, b)') == (("n", "next"), ("c", (((("m", ((False, (("n", "a"),),
                                                                               "k"),)),)),
                                                               (("n", "b"),))))


def test_a_given_lists_literals_keywords_and_unpacked_arguments():
    steps = parse('item(:dict(:data), _, #12, "r", k=#True, j=_, *, **)')
    assert steps[0] == ("n", "item") and steps[1][0] == "c"
    given = steps[1][1]
    assert type(given) is Given
    assert arguments(given) == ((("n", "dict"), ("c", "data")), None, (("v", "12"),),
                                (("q", "r"),), ("=", "k", (("v", "True"),)), ("=", "j", None),
                                ("*",), ("**",))
    assert arguments(Given("data")) == ((("n", "data"),),)  # the inner one, read in turn


def test_a_list_not_written_so_gives_what_was_read():
    # the items read before what is not followed by ", " or ")", nothing after it
    assert parse("f(a b, c)") == (("n", "f"), ("c", ((("n", "a"),),)))
    assert arguments(Given("a b, c")) == ((("n", "a"),),)
    assert parse("(a b, c)") == ()  # a tuple: all its places or none
    assert parse("(a, b") == ()
