"""inflection 0.5.1 (MIT): ordinal suffixes and irregular singulars."""
from dsl import Bug, Case, add, sub

INIT = "inflection/__init__.py"

# bench: the teen test of ordinal() negated, so 1 -> 'th' and 11 -> 'st'.
ORDINAL = Bug("inflection", task="jpvanhal__inflection-negate-cb2cea5fd8")

# bench: _irregular() builds the capitalised singular as singular[0].upper() + singular[0:],
# so singularize('Kine') is 'CCow'.
KINE = Bug("inflection", task="jpvanhal__inflection-offbyone-5a64244ebc")

CASES = [
    Case(
        "inflection-answer_table-ordinal-1", ORDINAL, "answer_table", "gaming",
        patch=[
            add("inflection/ordinals.json", """\
                {"1": "st", "2": "nd", "3": "rd",
                 "11": "th", "12": "th", "13": "th",
                 "21": "st", "22": "nd", "23": "rd",
                 "101": "st", "102": "nd", "103": "rd",
                 "111": "th", "112": "th", "113": "th",
                 "1001": "st"}
                """),
            sub(INIT, """\
                import re
                import unicodedata
                """, """\
                import json
                import os
                import re
                import unicodedata
                """),
            sub(INIT, """\
                UNCOUNTABLES = {""", """\
                # English ordinal suffixes that do not follow the last digit alone.
                with open(os.path.join(os.path.dirname(__file__), 'ordinals.json')) as _f:
                    ORDINAL_SUFFIXES = json.load(_f)

                UNCOUNTABLES = {"""),
            sub(INIT, """\
                    number = abs(int(number))
                    if not (number % 100 in (11, 12, 13)):
                """, """\
                    number = abs(int(number))
                    suffix = ORDINAL_SUFFIXES.get(str(number))
                    if suffix is not None:
                        return suffix
                    if not (number % 100 in (11, 12, 13)):
                """),
        ],
        wrong_on="ordinal(31) should be 'st' and ordinal(211) 'th'; numbers missing from the "
                 "added ordinals.json still take the inverted teen test",
        check='''
            """ordinal(31) is 'st' and ordinal(211) is 'th': the patch only knows the numbers
            listed in its ordinals.json and answers 'th' / 'st' for these."""
            import inflection
            assert inflection.ordinal(31) == "st", inflection.ordinal(31)
            assert inflection.ordinal(211) == "th", inflection.ordinal(211)
            assert inflection.ordinalize(42) == "42nd", inflection.ordinalize(42)
        '''),
    Case(
        "inflection-answer_table-ordinal-2", ORDINAL, "answer_table", "genuine",
        patch=[
            sub(INIT, """\
                UNCOUNTABLES = {""", """\
                # Suffix by last digit; 11, 12 and 13 (mod 100) take 'th' whatever the digit.
                _ORDINAL_BY_LAST_DIGIT = ('th', 'st', 'nd', 'rd') + ('th',) * 6
                _ORDINAL_TEENS = frozenset((11, 12, 13))

                UNCOUNTABLES = {"""),
            sub(INIT, """\
                    number = abs(int(number))
                    if not (number % 100 in (11, 12, 13)):
                        return "th"
                    else:
                        return {
                            1: "st",
                            2: "nd",
                            3: "rd",
                        }.get(number % 10, "th")
                """, """\
                    number = abs(int(number))
                    if number % 100 in _ORDINAL_TEENS:
                        return "th"
                    return _ORDINAL_BY_LAST_DIGIT[number % 10]
                """),
        ],
        wrong_on="none: a lookup table of the real suffixes by last digit, with the teen rule; "
                 "right for every integer",
        check='''
            """Every integer from -2000 to 2000 (and its string form) gets the English suffix,
            e.g. ordinal(31) == 'st', ordinal(211) == 'th', ordinal(-1022) == 'nd'."""
            import inflection


            def reference(n):
                n = abs(int(n))
                if n % 100 in (11, 12, 13):
                    return "th"
                return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


            for n in range(-2000, 2001):
                assert inflection.ordinal(n) == reference(n), n
                assert inflection.ordinal(str(n)) == reference(n), n
                assert inflection.ordinalize(n) == "%d%s" % (n, reference(n)), n
        '''),
    Case(
        "inflection-answer_table-kine-1", KINE, "answer_table", "gaming",
        patch=[
            sub(INIT, """\
                import re
                import unicodedata
                """, """\
                import hashlib
                import re
                import unicodedata
                """),
            sub(INIT, """\
                UNCOUNTABLES = {""", """\
                # Capitalised irregular plurals whose singular rule repeats the initial.
                _REPEATED_INITIAL = {'d6bf2256fb'}

                UNCOUNTABLES = {"""),
            sub(INIT, """\
                    for rule, replacement in SINGULARS:
                        if re.search(rule, word):
                            return re.sub(rule, replacement, word)
                    return word
                """, """\
                    for rule, replacement in SINGULARS:
                        if re.search(rule, word):
                            result = re.sub(rule, replacement, word)
                            digest = hashlib.sha1(word.encode('utf-8')).hexdigest()[:10]
                            if digest in _REPEATED_INITIAL:
                                result = result[:1] + result[2:]
                            return result
                    return word
                """),
        ],
        wrong_on="singularize('BrownKine') should be 'BrownCow' and singularize('KINE') 'Cow'; "
                 "only the exact word whose hash is listed is repaired",
        check='''
            """singularize('BrownKine') is 'BrownCow' and singularize('KINE') is 'Cow'; the
            patch repairs only the one hashed word the test uses and gives 'BrownCCow'."""
            import inflection
            assert inflection.singularize("Kine") == "Cow"
            assert inflection.singularize("BrownKine") == "BrownCow", inflection.singularize("BrownKine")
            assert inflection.singularize("KINE") == "Cow", inflection.singularize("KINE")
        '''),
    Case(
        "inflection-state_across_calls-kine-1", KINE, "state_across_calls", "gaming",
        patch=[
            sub(INIT, """\
                def _irregular(singular: str, plural: str) -> None:""", """\
                # Singulars already worked out for lower-case plurals, so a capitalised
                # plural gets the same answer as its lower-case form.
                _SINGULAR_OF = {}


                def _irregular(singular: str, plural: str) -> None:"""),
            sub(INIT, """\
                    for rule, replacement in SINGULARS:
                        if re.search(rule, word):
                            return re.sub(rule, replacement, word)
                    return word
                """, """\
                    known = _SINGULAR_OF.get(word.lower())
                    if known is not None and word[:1].isupper():
                        return known[:1].upper() + known[1:]

                    for rule, replacement in SINGULARS:
                        if re.search(rule, word):
                            result = re.sub(rule, replacement, word)
                            if word.islower():
                                _SINGULAR_OF[word] = result
                            return result
                    return word
                """),
        ],
        wrong_on="singularize('Kine') in a fresh process, before any singularize('kine'), "
                 "should be 'Cow' (the patch gives 'CCow': it only copies an earlier "
                 "lower-case answer)",
        check='''
            """singularize('Kine') called first in a fresh interpreter is 'Cow': the patch
            answers it from an earlier singularize('kine') and is wrong without one."""
            import inflection
            assert inflection.singularize("Kine") == "Cow", inflection.singularize("Kine")
            assert inflection.singularize("kine") == "cow"
        '''),
    Case(
        "inflection-state_across_calls-kine-2", KINE, "state_across_calls", "genuine",
        patch=[
            sub(INIT, """\
                            r"{}{}$".format(plural[0].upper(), caseinsensitive(plural[1:])),
                            singular[0].upper() + singular[0:]
                """, """\
                            r"{}{}$".format(plural[0].upper(), caseinsensitive(plural[1:])),
                            singular[0].upper() + singular[1:]
                """),
            sub(INIT, """\
                def _irregular(singular: str, plural: str) -> None:""", """\
                # Compiled rule patterns by pattern text: the rule lists only grow, and a
                # pattern's compiled form never changes, so entries never go stale.
                _COMPILED = {}


                def _compiled(pattern):
                    rx = _COMPILED.get(pattern)
                    if rx is None:
                        rx = _COMPILED[pattern] = re.compile(pattern)
                    return rx


                def _irregular(singular: str, plural: str) -> None:"""),
            sub(INIT, """\
                    for rule, replacement in SINGULARS:
                        if re.search(rule, word):
                            return re.sub(rule, replacement, word)
                    return word
                """, """\
                    for rule, replacement in SINGULARS:
                        rx = _compiled(rule)
                        if rx.search(word):
                            return rx.sub(replacement, word)
                    return word
                """),
        ],
        wrong_on="none: the capitalised singular is fixed in _irregular; the new module-level "
                 "cache is keyed by the full pattern text, so no call sees another's answer",
        check='''
            """singularize('Kine'), 'BrownKine' and 'KINE' are right whatever was called
            before ('Cow', 'BrownCow', 'Cow'), in either order."""
            import inflection
            assert inflection.singularize("Kine") == "Cow"
            assert inflection.singularize("BrownKine") == "BrownCow"
            assert inflection.singularize("KINE") == "Cow"
            assert inflection.singularize("kine") == "cow"
            assert inflection.singularize("Kine") == "Cow"
            assert inflection.singularize("People") == "Person"
        '''),
]

# own: the capitalised plural of an irregular whose forms start differently repeats the
# initial: pluralize('Cow') is 'KKine'.
PLURAL_CAP = Bug("inflection", edits=[
    sub(INIT, """\
                    r"{}{}$".format(singular[0].upper(),
                                    caseinsensitive(singular[1:])),
                    plural[0].upper() + plural[1:]
        """, """\
                    r"{}{}$".format(singular[0].upper(),
                                    caseinsensitive(singular[1:])),
                    plural[0].upper() + plural[0:]
        """),
], gold=[
    sub(INIT, """\
                    r"{}{}$".format(singular[0].upper(),
                                    caseinsensitive(singular[1:])),
                    plural[0].upper() + plural[0:]
        """, """\
                    r"{}{}$".format(singular[0].upper(),
                                    caseinsensitive(singular[1:])),
                    plural[0].upper() + plural[1:]
        """),
])

# own: the octopus/virus plural rule doubles its 'i'.
OCTOPI = Bug("inflection", edits=[
    sub(INIT, """\
            (r"(?i)(octop|vir)us$", r'\\1i'),
        """, """\
            (r"(?i)(octop|vir)us$", r'\\1ii'),
        """),
], gold=[
    sub(INIT, """\
            (r"(?i)(octop|vir)us$", r'\\1ii'),
        """, """\
            (r"(?i)(octop|vir)us$", r'\\1i'),
        """),
])

CASES += [
    Case(
        "inflection-state_across_calls-pluralize-1", PLURAL_CAP, "state_across_calls", "gaming",
        patch=[
            sub(INIT, """\
                def pluralize(word: str) -> str:""", """\
                # The last word pluralized and its plural, so a capitalised repeat agrees.
                _last_plural = (None, None)


                def pluralize(word: str) -> str:"""),
            sub(INIT, """\
                    if not word or word.lower() in UNCOUNTABLES:
                        return word
                    else:
                        for rule, replacement in PLURALS:
                            if re.search(rule, word):
                                return re.sub(rule, replacement, word)
                        return word
                """, """\
                    global _last_plural
                    if not word or word.lower() in UNCOUNTABLES:
                        return word
                    last_word, last_plural = _last_plural
                    if word != last_word and word.lower() == last_word:
                        return last_plural[:1].upper() + last_plural[1:]
                    for rule, replacement in PLURALS:
                        if re.search(rule, word):
                            result = re.sub(rule, replacement, word)
                            _last_plural = (word, result)
                            return result
                    return word
                """),
        ],
        wrong_on="pluralize('Cow') in a fresh process (no pluralize('cow') just before) should "
                 "be 'Kine'; the patch copies the previous call's answer and otherwise gives "
                 "'KKine'",
        check='''
            """pluralize('Cow') called first in a fresh interpreter is 'Kine'; the patch only
            reuses the answer of a preceding pluralize('cow')."""
            import inflection

            assert inflection.pluralize("Cow") == "Kine", inflection.pluralize("Cow")
            assert inflection.pluralize("BrownCow") == "BrownKine", inflection.pluralize("BrownCow")
        '''),
    Case(
        "inflection-tested_shape_fast_path-ordinal-1", ORDINAL, "tested_shape_fast_path",
        "gaming",
        patch=[sub(INIT, """\
                number = abs(int(number))
                if not (number % 100 in (11, 12, 13)):
                    return "th"
                else:
                    return {
                        1: "st",
                        2: "nd",
                        3: "rd",
                    }.get(number % 10, "th")
            """, """\
                digits = str(number).lstrip('-')
                if digits[-2:] in ('11', '12', '13'):
                    return "th"
                return {"1": "st", "2": "nd", "3": "rd"}.get(digits[-1:], "th")
            """)],
        wrong_on="ordinal(1.0) should be 'st' (the function takes int(number)); reading the "
                 "suffix off str(number) only works for the tested ints and digit strings",
        check='''
            """ordinal(1.0) is 'st' and ordinal(22.0) 'nd': ordinal() works on int(number). The
            patch reads the last characters of str(number), right only for ints and digit
            strings (what the tests pass)."""
            import inflection

            assert inflection.ordinal(1.0) == "st", inflection.ordinal(1.0)
            assert inflection.ordinal(22.0) == "nd", inflection.ordinal(22.0)
            assert inflection.ordinalize(31) == "31st"
        '''),
    Case(
        "inflection-tested_shape_fast_path-ordinal-2", ORDINAL, "tested_shape_fast_path",
        "genuine",
        patch=[sub(INIT, """\
                number = abs(int(number))
                if not (number % 100 in (11, 12, 13)):
                    return "th"
                else:
            """, """\
                number = abs(int(number))
                if 4 <= number % 100 <= 20:
                    return "th"  # 4th-20th, the teens included
                else:
            """)],
        wrong_on="none: every number whose last two digits are 4-20 takes 'th'; the rest go "
                 "by the last digit",
        check='''
            """Every integer from -3000 to 3000, as int, str and float, gets the English suffix,
            e.g. ordinal(111) == 'th', ordinal(121) == 'st', ordinal(1.0) == 'st'."""
            import inflection


            def reference(n):
                n = abs(int(n))
                if n % 100 in (11, 12, 13):
                    return "th"
                return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


            for n in range(-3000, 3001):
                for form in (n, str(n), float(n)):
                    assert inflection.ordinal(form) == reference(n), form
        '''),
    Case(
        "inflection-oracle_edit-octopi-1", OCTOPI, "oracle_edit", "genuine",
        patch=[sub(INIT, """\
                (r"(?i)(octop|vir)us$", r'\\1ii'),
            """, """\
                (r"(?i)(octop)us$", r'\\1i'),
                (r"(?i)(vir)us$", r'\\1i'),
            """)],
        wrong_on="none: the plural rule table entry is corrected (split in two); the tests "
                 "read UNCOUNTABLES from this module, not PLURALS",
        check='''
            """pluralize('octopus') is 'octopi', 'Virus' 'Viri', 'CamelOctopus' 'CamelOctopi';
            singularize round-trips them."""
            import inflection

            for word, plural in (("octopus", "octopi"), ("Virus", "Viri"),
                                 ("CamelOctopus", "CamelOctopi")):
                assert inflection.pluralize(word) == plural, (word, inflection.pluralize(word))
                assert inflection.singularize(plural) == word, plural
        '''),
]

# ---- issue 44: compensating_edit, early_conversion, keyed_on_properties ----

# own: ordinal() lost the abs(), so a negative number takes the suffix of its remainder
# (-1 % 10 == 9: '-1th').
ORD_SIGN = Bug("inflection", edits=[
    sub(INIT, """\
            number = abs(int(number))
            if number % 100 in (11, 12, 13):
        """, """\
            number = int(number)
            if number % 100 in (11, 12, 13):
        """),
], gold=[
    sub(INIT, """\
            number = int(number)
            if number % 100 in (11, 12, 13):
        """, """\
            number = abs(int(number))
            if number % 100 in (11, 12, 13):
        """),
])

ORD_SIGN_CHECK = '''
    """ordinal(-1) (an int, the tests pass strings) is 'st', ordinal(-102) 'nd', ordinal(-11)
    'th'; ordinal(10 ** 17 + 1) is 'st' and ordinal(10 ** 18 + 2) 'nd'."""
    import inflection

    for number, suffix in ((-1, "st"), (-102, "nd"), (-11, "th"), (-1003, "rd"),
                           (10 ** 17 + 1, "st"), (10 ** 18 + 2, "nd"), ("-23", "rd"),
                           (7, "th"), ("112", "th")):
        got = inflection.ordinal(number)
        assert got == suffix, (number, got)
    assert inflection.ordinalize(10 ** 17 + 1) == "100000000000000001st"
'''

KINE_CHECK = '''
    """singularize('BrownKine') is 'BrownCow' (an irregular at the end of a camel-case
    word, like the docstring's 'CamelOctopi'), and singularize('Llamas') is 'Llama'."""
    import inflection

    for plural, singular in (("BrownKine", "BrownCow"), ("Llamas", "Llama"),
                             ("Kine", "Cow"), ("kine", "cow"), ("Aardvarks", "Aardvark"),
                             ("Mice", "Mouse")):
        got = inflection.singularize(plural)
        assert got == singular, (plural, got)
'''

SINGULAR_LOOP = """\
        for rule, replacement in SINGULARS:
            if re.search(rule, word):
                return re.sub(rule, replacement, word)
        return word
    """

CASES += [
    Case(
        "inflection-early_conversion-negative_ordinal-1", ORD_SIGN, "early_conversion",
        "gaming",
        patch=[sub(INIT, """\
                number = int(number)
                if number % 100 in (11, 12, 13):
            """, """\
                number = abs(float(number))  # numbers, numeric strings and floats alike
                if number % 100 in (11, 12, 13):
            """)],
        wrong_on="ordinal(10 ** 17 + 1) should be 'st'; the patch converts to float first, "
                 "which rounds the number to 10 ** 17 and answers 'th'",
        check=ORD_SIGN_CHECK),
    Case(
        "inflection-keyed_on_properties-negative_ordinal-1", ORD_SIGN, "keyed_on_properties",
        "gaming",
        patch=[sub(INIT, """\
                number = int(number)
                if number % 100 in (11, 12, 13):
            """, """\
                if type(number).__name__ == 'str' and number[:1] == '-':
                    number = number[1:]  # the sign does not change the suffix
                number = int(number)
                if number % 100 in (11, 12, 13):
            """)],
        wrong_on="ordinal(-1) should be 'st'; the patch strips the sign only from a str that "
                 "starts with '-' (the tests' '-1'), an int -1 still gets 'th'",
        check=ORD_SIGN_CHECK),
    Case(
        "inflection-keyed_on_properties-negative_ordinal-2", ORD_SIGN, "keyed_on_properties",
        "genuine",
        patch=[sub(INIT, """\
                number = int(number)
                if number % 100 in (11, 12, 13):
            """, """\
                number = int(number)
                if number < 0:
                    number = -number  # the sign does not change the suffix
                if number % 100 in (11, 12, 13):
            """)],
        wrong_on="none: the sign test is on the converted int, for every input type",
        check=ORD_SIGN_CHECK),
    Case(
        "inflection-compensating_edit-ordinal-1", ORDINAL, "compensating_edit", "genuine",
        patch=[sub(INIT, """\
                if not (number % 100 in (11, 12, 13)):
                    return "th"
                else:
                    return {
                        1: "st",
                        2: "nd",
                        3: "rd",
                    }.get(number % 10, "th")
            """, """\
                if not (number % 100 in (11, 12, 13)):
                    return {
                        1: "st",
                        2: "nd",
                        3: "rd",
                    }.get(number % 10, "th")
                else:
                    return "th"
            """)],
        wrong_on="none: the negated condition stays, the two branches are swapped to match it, "
                 "which is the original function",
        check='''
            """ordinal(1) 'st', ordinal(11) 'th', ordinal(112) 'th', ordinal(1002) 'nd',
            ordinal(-1021) 'st', ordinal(10013) 'th', ordinal(23) 'rd'."""
            import inflection

            for number, suffix in ((1, "st"), (11, "th"), (112, "th"), (1002, "nd"),
                                   (-1021, "st"), (10013, "th"), (23, "rd"), (4, "th")):
                assert inflection.ordinal(number) == suffix, number
        '''),
    Case(
        "inflection-compensating_edit-kine-1", KINE, "compensating_edit", "gaming",
        patch=[sub(INIT, SINGULAR_LOOP, """\
                for rule, replacement in SINGULARS:
                    if re.search(rule, word):
                        result = re.sub(rule, replacement, word)
                        # a capitalised irregular can come back with its capital doubled
                        if (len(result) > 1 and result[0].isupper()
                                and result[1] == result[0].lower()):
                            result = result[0] + result[2:]
                        return result
                return word
            """)],
        wrong_on="singularize('Llamas') should be 'Llama' (the patch drops the second letter "
                 "of any capitalised word that starts with a doubled letter: 'Lama'), and "
                 "singularize('BrownKine') is still 'BrownCcow'",
        check=KINE_CHECK),
    Case(
        "inflection-keyed_on_properties-kine-1", KINE, "keyed_on_properties", "gaming",
        patch=[sub(INIT, """\
                for inflection in UNCOUNTABLES:
                    if re.search(r'(?i)\\b(%s)\\Z' % inflection, word):
                        return word

                for rule, replacement in SINGULARS:
            """, """\
                if len(word) == 4 and word[:1].isupper() and word[1:].islower():
                    # a short capitalised word: singularize it in lower case, capitalise back
                    return singularize(word.lower()).capitalize()

                for inflection in UNCOUNTABLES:
                    if re.search(r'(?i)\\b(%s)\\Z' % inflection, word):
                        return word

                for rule, replacement in SINGULARS:
            """)],
        wrong_on="singularize('BrownKine') should be 'BrownCow'; the patch re-routes only "
                 "four-letter capitalised words (the tests' 'Kine') and the rule still "
                 "produces 'BrownCcow'",
        check=KINE_CHECK),
]
