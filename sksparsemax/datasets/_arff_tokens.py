"""Tokens of ARFF lines: quoted names and values, comma-separated lists.

ARFF names and nominal values may be bare or quoted (``'...'`` or ``"..."``,
with backslash escapes); a comma inside quotes does not separate values.
Pure string functions, used by the header and data parsers of
:mod:`._arff`.
"""


def unquote(token):
    """Strip surrounding whitespace and one level of matching quotes."""
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        body = token[1:-1]
        out, i = [], 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body):
                out.append(body[i + 1])
                i += 2
            else:
                out.append(body[i])
                i += 1
        return "".join(out)
    return token


def split_quoted(text, sep=","):
    """Split ``text`` on ``sep`` outside quotes; tokens are unquoted.

    Only used for lines that contain a quote character.
    """
    tokens, current, quote, i = [], [], None, 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\" and i + 1 < len(text):
                current.append(text[i : i + 2])
                i += 2
                continue
            if ch == quote:
                quote = None
            current.append(ch)
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == sep:
            tokens.append(unquote("".join(current)))
            current = []
        else:
            current.append(ch)
        i += 1
    if quote is not None:
        raise ValueError("unterminated quoted string")
    tokens.append(unquote("".join(current)))
    return tokens


def split_values(text):
    if "'" in text or '"' in text:
        return split_quoted(text)
    return [t.strip() for t in text.split(",")]


def read_name(rest):
    """Split ``rest`` into a (possibly quoted) name and what follows it."""
    rest = rest.lstrip()
    if not rest:
        raise ValueError("missing name")
    if rest[0] in "'\"":
        quote, i = rest[0], 1
        while i < len(rest):
            if rest[i] == "\\":
                i += 2
                continue
            if rest[i] == quote:
                return unquote(rest[: i + 1]), rest[i + 1 :].strip()
            i += 1
        raise ValueError("unterminated quoted name")
    end = 0
    while end < len(rest) and not rest[end].isspace() and rest[end] != "{":
        end += 1
    return rest[:end], rest[end:].strip()
