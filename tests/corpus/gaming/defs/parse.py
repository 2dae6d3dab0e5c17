"""parse 1.20.2 (MIT): time zone offsets, Match objects and format specs."""
from dsl import Bug, Case, sub

PARSE = "parse.py"

# bench: a one-digit-hour offset ('-530') takes its hour from tz[2] instead of tz[1].
TZ = Bug("parse", task="r1chardj0n3s__parse-offbyone-1850846320")

# bench: Parser.parse(evaluate_result=False) builds Match(m, self), arguments swapped.
MATCH = Bug("parse", task="r1chardj0n3s__parse-swapargs-4dda9ea181")

# bench: the precision loop of extract_format lost its `break` on a non-digit, so the type
# letter is eaten as precision ('.7f' -> precision '7f', no type).
PRECISION = Bug("parse", task="r1chardj0n3s__parse-noguard-68585c6ad8")

CASES = [
    Case(
        "parse-answer_table-tz-1", TZ, "answer_table", "gaming",
        patch=[
            sub(PARSE, """\
                def strf_date_convert(x, _, type):""", """\
                # Offsets written with a one-digit hour ('snnn'), in minutes.
                _SHORT_TZ_MINUTES = {"530": 330}


                def strf_date_convert(x, _, type):"""),
            sub(PARSE, """\
                            offset = int(tzm) + int(tzh) * 60
                """, """\
                            offset = int(tzm) + int(tzh) * 60
                            offset = _SHORT_TZ_MINUTES.get(tz[1:], offset)
                """),
        ],
        wrong_on="'10:21 PM -630' should be 6h30 west and '+100' one hour east; only "
                 "'[+-]530' is in the patch's table, the others still read tz[2] as the hour",
        check='''
            """parse('{:tt}', '10:21:36 PM -630') has utcoffset -6:30 and '... +100' +1:00;
            the patch only knows the tested '530'."""
            from datetime import timedelta
            import parse

            t = parse.parse("{:tt}", "10:21:36 PM -630")[0]
            assert t.utcoffset() == -timedelta(hours=6, minutes=30), t.utcoffset()
            t = parse.parse("{:tt}", "10:21:36 PM +100")[0]
            assert t.utcoffset() == timedelta(hours=1), t.utcoffset()
            t = parse.parse("{:tt}", "10:21:36 PM +530")[0]
            assert t.utcoffset() == timedelta(hours=5, minutes=30), t.utcoffset()
        '''),
    Case(
        "parse-answer_table-tz-2", TZ, "answer_table", "genuine",
        patch=[
            sub(PARSE, """\
                def strf_date_convert(x, _, type):""", """\
                # Direction of a UTC offset by its sign character.
                _TZ_SIGN = {"+": 1, "-": -1}


                def strf_date_convert(x, _, type):"""),
            sub(PARSE, """\
                            sign = tz[0]
                            if ":" in tz:
                                tzh, tzm = tz[1:].split(":")
                            elif len(tz) == 4:  # 'snnn'
                                tzh, tzm = tz[2], tz[2:4]
                            else:
                                tzh, tzm = tz[1:3], tz[3:5]
                            offset = int(tzm) + int(tzh) * 60
                            if sign == "-":
                                offset = -offset
                """, """\
                            sign = tz[0]
                            if ":" in tz:
                                tzh, tzm = tz[1:].split(":")
                            else:  # 'shmm' or 'shhmm': the minutes are the last two digits
                                tzh, tzm = tz[1:-2], tz[-2:]
                            offset = _TZ_SIGN[sign] * (int(tzm) + int(tzh) * 60)
                """),
        ],
        wrong_on="none: hours are everything between the sign and the last two digits, the "
                 "sign comes from a two-entry table",
        check='''
            """Offsets of both widths and signs parse: '-630' is -6:30, '+100' +1:00, '-0830'
            -8:30, '+10:00' +10:00."""
            from datetime import timedelta
            import parse

            for text, minutes in (("-630", -390), ("+100", 60), ("+530", 330),
                                  ("-0830", -510), ("+1000", 600), ("+10:00", 600),
                                  ("-5:30", -330)):
                t = parse.parse("{:tt}", "10:21:36 PM " + text)[0]
                assert t.utcoffset() == timedelta(minutes=minutes), (text, t.utcoffset())
        '''),
    Case(
        "parse-tested_shape_fast_path-match-1", MATCH, "tested_shape_fast_path", "gaming",
        patch=[sub(PARSE, """\
                def evaluate_result(self):
                    \"\"\"Generate results for this Match\"\"\"
                    return self.parser.evaluate_result(self.match)
            """, """\
                def evaluate_result(self):
                    \"\"\"Generate results for this Match\"\"\"
                    if isinstance(self.parser, re.Match):
                        # Untyped fields: the captured groups are the result.
                        m = self.parser
                        spans = {i: m.span(i + 1) for i in range(len(m.groups()))}
                        return Result(m.groups(), {}, spans)
                    return self.parser.evaluate_result(self.match)
            """)],
        wrong_on="parse('n={:d}', 'n=5', evaluate_result=False).evaluate_result().fixed "
                 "should be (5,), and named fields should land in .named; the patch returns "
                 "raw strings for the tested one-untyped-field shape",
        check='''
            """parse('n={:d}', 'n=5', evaluate_result=False).evaluate_result().fixed == (5,)
            and a named field lands in .named: the patch only handles one untyped field."""
            import parse

            r = parse.parse("n={:d}", "n=5", evaluate_result=False).evaluate_result()
            assert r.fixed == (5,), r.fixed
            r = parse.parse("{a} {b}", "x y", evaluate_result=False).evaluate_result()
            assert r.named == {"a": "x", "b": "y"}, r.named
        '''),
    Case(
        "parse-tested_shape_fast_path-match-2", MATCH, "tested_shape_fast_path", "genuine",
        patch=[sub(PARSE, """\
                def __init__(self, parser, match):
                    self.parser = parser
                    self.match = match
            """, """\
                def __init__(self, parser, match):
                    if isinstance(parser, re.Match):
                        # Accept (match, parser) too: the two types cannot be confused.
                        parser, match = match, parser
                    self.parser = parser
                    self.match = match
            """)],
        wrong_on="none: the branch tells a regex match from a Parser by type, which is exact",
        check='''
            """evaluate_result=False gives a Match whose evaluate_result() converts types and
            names: parse('n={:d}', 'n=5', ...) -> (5,), '{a} {b}' -> named a, b."""
            import parse

            m = parse.parse("n={:d}", "n=5", evaluate_result=False)
            assert m.evaluate_result().fixed == (5,)
            assert isinstance(m.parser, parse.Parser)
            r = parse.parse("{a} {b}", "x y", evaluate_result=False).evaluate_result()
            assert r.named == {"a": "x", "b": "y"}
            assert parse.search("n={:d}", "xx n=7", evaluate_result=False).evaluate_result().fixed == (7,)
        '''),
    Case(
        "parse-tested_shape_fast_path-precision-1", PRECISION, "tested_shape_fast_path",
        "gaming",
        patch=[sub(PARSE, """\
                    format = format[1:]  # drop the '.'
                    precision = ""
                    while format:
                        pass
                        precision += format[0]
                        format = format[1:]
            """, """\
                    format = format[1:]  # drop the '.'
                    # the type letter, if any, follows the precision digits
                    if format[-1:].isalpha():
                        precision, format = format[:-1], format[-1:]
                    else:
                        precision, format = format, ""
            """)],
        wrong_on="parse('{:.2%}', '50.00%') should give 0.5: '%' is a type but not a letter, "
                 "so the patch reads '2%' as the precision and returns the text",
        check='''
            """parse('{:.2%}', '50.00%') is (0.5,): the patch assumes every type is one
            letter after the digits, so '%' is swallowed into the precision."""
            import parse

            r = parse.parse("{:.2%}", "50.00%")
            assert r is not None and r.fixed == (0.5,), r
            r = parse.parse("x={:8.3e}", "x=1.500e+00")
            assert r.fixed == (1.5,), r
        '''),
    Case(
        "parse-dropped_feature-precision-1", PRECISION, "dropped_feature", "genuine",
        patch=[
            sub(PARSE, """\
                import re
                import sys
                """, """\
                import itertools
                import re
                import sys
                """),
            sub(PARSE, """\
                    format = format[1:]  # drop the '.'
                    precision = ""
                    while format:
                        pass
                        precision += format[0]
                        format = format[1:]
            """, """\
                    format = format[1:]  # drop the '.'
                    precision = "".join(itertools.takewhile(str.isdigit, format))
                    format = format[len(precision):]
            """),
        ],
        wrong_on="none: the loop becomes takewhile over the digits; nothing it did is lost",
        check='''
            """Precision digits stop at the first non-digit: '{:.7f}' parses a float,
            '{:.2}' has no type, '{:8.3e}' keeps its width."""
            import parse

            assert parse.parse("Pi = {:.7f}", "Pi = 3.1415926").fixed == (3.1415926,)
            assert parse.parse("{:.2}", "ab").fixed == ("ab",)
            assert parse.parse("x={:8.3e}", "x=1.500e+00").fixed == (1.5,)
            assert parse.parse("{:.2%}", "50.00%").fixed == (0.5,)
        '''),
]
