"""Real-world name forms for the labeled sets (imported by gen_labeled.py; see there for how to run).

Every case is built from the list by a rule that follows how people and merchants write names, never from
the matcher's misses:

  variant:hispanic     LISTED "PATERNAL MATERNAL, Given [Given2]" (a Latin American person: a Latin American
                       sanctions program or a Spanish-speaking country in the remarks) written as people do:
                       "Given Paternal", "Given Given2 Paternal", "Given P. Maternal" (in turn).
  variant:arabic       a person of a Middle East / terrorism program, written "Given bin Family",
                       "Given Family" or "Given al-Family" (in turn): the nasab chain (father, grandfather)
                       dropped, the al- particle dropped or kept; every other case also respelled by a common
                       transliteration (Muhammad -> Mohammed, u -> o, doubled letters, ...).
  variant:slavic       a person of a Russia / Ukraine / Belarus program written "Given Family" (patronymic
                       dropped) with the romanization changed by the rules of other systems (-ov -> -off/-ow,
                       -iy -> -y/-ij, kh -> h, zh -> j, yu -> ju/iu, ya -> ja, v -> w, ks -> x, ...).
  variant:entity-typo  one typo (substitution by a keyboard neighbour, deletion, transposition, doubled
                       letter, in turn) in an entity name of 4+ words, half of them 8+ words; when the name has
                       a legal-form word (joint, stock, company, limited, public, open, ...) the typo goes into
                       it every other case.
  variant:given-typo   "Given Family" for a person with a short (3-6 letter) first given name, that name
                       misspelled by one letter (a vowel changed, or a consonant replaced by a keyboard
                       neighbour).
  miss:common-person   common Hispanic and Arabic full names (given + two family names) that share exactly one
                       word with some listed person and at most one (compared after transliteration folding)
                       with every listed name, primary or alias: the names of other people.
"""
import csv, gzip, os, re

PER_KIND = 48

LATAM_PROGRAMS = ("SDNT", "SDNTK", "ILLICIT-DRUGS", "VENEZUELA", "CUBA", "NICARAGUA", "TCO", "FTO")
LATAM_PLACES = ("Mexico", "Colombia", "Venezuela", "Cuba", "Nicaragua", "Panama", "Peru", "Ecuador", "Bolivia",
                "Guatemala", "Honduras", "El Salvador", "Paraguay", "Argentina", "Chile", "Dominican Republic",
                "Costa Rica", "Spain", "Uruguay")
ARAB_PROGRAMS = ("SDGT", "SYRIA", "IRAQ", "LEBANON", "YEMEN", "LIBYA", "SUDAN", "HIZBALLAH", "FTO")
SLAVIC_PROGRAMS = ("RUSSIA", "UKRAINE", "BELARUS", "MAGNIT", "CAATSA - RUSSIA", "CYBER")
HISP_PARTICLES = {"DE", "DEL", "LA", "LAS", "LOS", "Y"}
ARAB_PARTICLES = {"AL", "EL"}
NASAB = {"BIN", "IBN", "BINT", "BEN"}
COMPOUND_FIRST = {"ABD", "ABDUL", "ABDEL", "ABU", "ABDOL"}
LEGAL_WORDS = {"JOINT", "STOCK", "COMPANY", "LIMITED", "PUBLIC", "OPEN", "CLOSED", "CORPORATION", "LIABILITY",
               "INCORPORATED"}

# Common transliteration respellings (a word of the list -> how it is often written).
ARABIC_TRANSLIT = {"MUHAMMAD": "MOHAMMED", "MOHAMMAD": "MUHAMMAD", "MOHAMED": "MOHAMMAD", "MOHAMMED": "MOHAMED",
                   "AHMAD": "AHMED", "AHMED": "AHMAD", "HUSAYN": "HUSSEIN", "HUSSEIN": "HUSAIN", "HUSAIN": "HUSAYN",
                   "HASAN": "HASSAN", "HASSAN": "HASAN", "ABDUL": "ABDEL", "ABDEL": "ABDUL", "ABD": "ABDUL",
                   "SAID": "SAEED", "SAEED": "SAID", "SAYID": "SAYED", "YUSUF": "YOUSEF", "YOUSEF": "YUSUF",
                   "USAMA": "OSAMA", "OSAMA": "USAMA", "UMAR": "OMAR", "OMAR": "UMAR", "UTHMAN": "OSMAN",
                   "KHALID": "KHALED", "KHALED": "KHALID", "MAHMUD": "MAHMOUD", "MAHMOUD": "MAHMUD",
                   "MUSTAFA": "MOSTAFA", "IBRAHIM": "EBRAHIM", "ISMAIL": "ESMAIL", "YAHYA": "YEHIA",
                   "HAMID": "HAMEED", "RASHID": "RASHEED", "SALIH": "SALEH", "SALEH": "SALIH", "ALI": "ALY",
                   "JAMAL": "GAMAL", "QASIM": "KASSEM", "JAFAR": "JAAFAR", "ABDALLAH": "ABDULLAH",
                   "ABDULLAH": "ABDALLAH", "HUSAM": "HOSSAM", "FAISAL": "FAYSAL", "NASIR": "NASSER",
                   "NASSER": "NASIR", "YASIN": "YASSIN", "YASSIN": "YASIN", "ZAYD": "ZAID", "SULAYMAN": "SULEIMAN"}

# Words that mark a name as Arabic (with ARABIC_TRANSLIT's keys and an al-/el- family particle).
ARABIC_NAMES = set(ARABIC_TRANSLIT) | {"ABDUL", "ABU", "ABBAS", "HAMAD", "HAMZA", "JAMIL", "KARIM", "MUSA", "NABIL",
                                       "SAMI", "TARIQ", "WALID", "YASSER", "ZIAD", "FAHD", "SAAD", "SAUD", "KHALIL",
                                       "MANSUR", "MANSOUR", "HAMDAN", "BAKR", "IBRAHIM", "YUSIF", "ABDULLAH"}

NEIGHBOURS = {"a": "s", "b": "v", "c": "x", "d": "s", "e": "r", "f": "g", "g": "h", "h": "j", "i": "o", "j": "k",
              "k": "l", "l": "k", "m": "n", "n": "m", "o": "i", "p": "o", "q": "w", "r": "t", "s": "a", "t": "r",
              "u": "y", "v": "b", "w": "e", "x": "z", "y": "u", "z": "x"}
VOWEL_NEXT = {"a": "e", "e": "i", "i": "e", "o": "u", "u": "o", "y": "i"}

COMMON_GIVEN_HISP = ["Maria", "Jose", "Juan", "Carlos", "Luis", "Ana", "Jorge", "Pedro", "Miguel", "Rosa",
                     "Javier", "Laura", "Diego", "Sofia", "Fernando", "Carmen", "Ricardo", "Lucia", "Andres", "Elena"]
COMMON_SUR_HISP = ["Garcia", "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Perez", "Sanchez",
                   "Ramirez", "Torres", "Flores", "Rivera", "Gomez", "Diaz", "Cruz", "Morales", "Reyes", "Ortiz",
                   "Gutierrez", "Chavez", "Ramos", "Vargas", "Castillo", "Jimenez", "Moreno", "Romero"]
COMMON_GIVEN_ARAB = ["Mohammed", "Ahmed", "Ali", "Omar", "Youssef", "Khaled", "Hassan", "Mahmoud", "Mustafa",
                     "Ibrahim", "Fatima", "Aisha", "Karim", "Tariq", "Nabil", "Samir", "Walid", "Rami", "Layla", "Nour"]
COMMON_SUR_ARAB = ["Haddad", "Khoury", "Mansour", "Nasser", "Saleh", "Hamdan", "Aziz", "Farouk", "Sabbagh",
                   "Khalil", "Daher", "Issa", "Barakat", "Qassem", "Shami", "Najjar", "Masri", "Rahal", "Tamimi",
                   "Zaki", "Hijazi", "Obeid", "Sharif", "Jaber", "Bitar", "Awad"]


def split_words(s):
    return [w for w in re.split(r"[\s\-]+", s.replace(",", " ")) if w]


def title(ws):
    return " ".join(w.capitalize() if w.upper() not in ("AL", "BIN", "DE", "Y") else w.lower() for w in ws)


EXCL = None  # (uids, queries) used by earlier sets, when generating the fresh held-out set


def pick(pool, off, n=PER_KIND):
    """Even positions of the pool for the development set (off == 0), odd ones for the held-out set; then an
    even stride over that half. For the fresh held-out set (EXCL set): the whole pool without the entries the
    earlier sets used, then an even stride over it."""
    if EXCL is not None:
        pool = [p for p in pool if (p not in EXCL[1] if isinstance(p, str) else p[0] not in EXCL[0])]
        step = max(1, len(pool) // n)
        return pool[step // 2::step][:n]
    half = pool[(0 if off == 0 else 1)::2]
    step = max(1, len(half) // n)
    return half[::step][:n]


def has_program(r, progs):
    return any(p in r[3] for p in progs)


def individuals(rows):
    out = []
    for r in rows:
        if r[2].strip() != "individual" or "," not in r[1]:
            continue
        last, _, given = r[1].partition(",")
        out.append((int(r[0]), r[1].strip(), split_words(last), split_words(given), r))
    return sorted(out, key=lambda e: e[0])


def given_head(given):
    """The first given name as people write it: a compound (Abd al-Rahman, Abu Bakr) stays whole."""
    if not given:
        return []
    if given[0].upper().strip("'") in COMPOUND_FIRST and len(given) >= 2:
        if given[1].upper() in ARAB_PARTICLES and len(given) >= 3:
            return given[:3]
        return given[:2]
    return given[:1]


def arabic_respell(w):
    u = w.upper().strip("'")
    if u in ARABIC_TRANSLIT:
        return ARABIC_TRANSLIT[u]
    for a, b in (("OU", "U"), ("EE", "I"), ("U", "O"), ("I", "E"), ("SS", "S"), ("A", "E")):
        if a in u[1:]:
            i = u.index(a, 1)
            return u[:i] + b + u[i + len(a):]
    return u


SLAVIC_RULES = [
    (r"OV$", "OFF"), (r"EV$", "EFF"), (r"IY$", "Y"), (r"KH", "H"), (r"ZH", "J"), (r"^YU", "JU"), (r"^YA", "JA"),
    (r"OV$", "OW"), (r"IY$", "IJ"), (r"^V", "W"), (r"KS", "X"), (r"EY$", "EI"), (r"YU", "IU"), (r"TS", "TZ"),
    (r"^YE", "E"), (r"SH", "SCH"), (r"CH", "TCH"), (r"^E", "YE"), (r"I$", "Y"), (r"Y$", "I"),
]


def slavic_respell(w, k):
    """Applies the first rule (starting from rule k, in turn) that changes w."""
    u = w.upper()
    for j in range(len(SLAVIC_RULES)):
        pat, rep = SLAVIC_RULES[(k + j) % len(SLAVIC_RULES)]
        v = re.sub(pat, rep, u, count=1)
        if v != u:
            return v
    return None


def typo(w, k):
    """One typo of kind k % 4 in word w (letters only, 4+ letters): keyboard-neighbour substitution, deletion,
    adjacent transposition, doubled letter, at a position inside the word."""
    lw = w.lower()
    i = 1 + (k // 4) % max(1, len(lw) - 2)
    i = min(i, len(lw) - 2)
    kind = k % 4
    if kind == 0:
        c = lw[i]
        r = NEIGHBOURS.get(c, "e")
        out = lw[:i] + r + lw[i + 1:]
    elif kind == 1:
        out = lw[:i] + lw[i + 1:]
    elif kind == 2:
        if lw[i] == lw[i + 1]:
            out = lw[:i] + lw[i + 2:] + lw[i]  # falls back to a move
            out = lw[:i] + lw[i + 1:]
        else:
            out = lw[:i] + lw[i + 1] + lw[i] + lw[i + 2:]
    else:
        out = lw[:i] + lw[i] + lw[i:]
    return out.upper() if w.isupper() else out


def fold(w):
    """A transliteration-insensitive key, to compare common names with the list fairly."""
    u = w.upper().strip("'")
    u = ARABIC_TRANSLIT.get(u, u)
    u = re.sub(r"(.)\1", r"\1", u)
    return u[0] + re.sub(r"[AEIOUY]", "", u[1:]) if u else u


def cases(base, rows, off, excl=None):
    global EXCL
    EXCL = excl
    out = []
    ind = individuals(rows)

    # variant:hispanic
    pool = []
    for uid, name, last, given, r in ind:
        sur = [w for w in last if w.upper() not in HISP_PARTICLES]
        latam = has_program(r, LATAM_PROGRAMS) or any(p in r[11] for p in LATAM_PLACES)
        if latam and len(sur) == 2 and given and not any(w.upper() in ARAB_PARTICLES | NASAB for w in last):
            pool.append((uid, name, sur, given))
    for i, (uid, name, sur, given) in enumerate(pick(pool, off)):
        form = i % 3
        if form == 1 and len(given) >= 2:
            q = title(given[:2] + [sur[0]])
        elif form == 2:
            q = title(given[:1]) + " " + sur[0][0].upper() + ". " + title([sur[1]])
        else:
            q = title(given[:1] + [sur[0]])
        out.append((q, uid, "variant:hispanic", name))

    # variant:arabic
    pool = []
    for uid, name, last, given, r in ind:
        fam = [w for w in last if w.upper() not in ARAB_PARTICLES]
        arabic = any(w.upper().strip("'") in ARABIC_NAMES for w in given + last) or len(fam) < len(last)
        if has_program(r, ARAB_PROGRAMS) and arabic and fam and len(given) >= 2 and \
                not any(w.upper() in NASAB for w in fam):
            pool.append((uid, name, last, fam, given))
    for i, (uid, name, last, fam, given) in enumerate(pick(pool, off)):
        head = [w for w in given_head(given) if w.upper() not in NASAB]
        if not head:
            continue
        if i % 2 == 0:
            head = [arabic_respell(head[0])] + head[1:]
        form = i % 3
        if form == 0:
            q = title(head + ["bin"] + fam)
        elif form == 1:
            q = title(head + fam)
        else:
            q = title(head) + " al-" + title(fam)
        out.append((q, uid, "variant:arabic", name))

    # variant:slavic
    pool = []
    for uid, name, last, given, r in ind:
        if has_program(r, SLAVIC_PROGRAMS) and len(last) == 1 and given and len(last[0]) >= 4:
            pool.append((uid, name, last, given))
    n = 0
    for i, (uid, name, last, given) in enumerate(pick(pool, off, PER_KIND + 24)):
        fam = slavic_respell(last[0], i)
        first = (slavic_respell(given[0], i + 7) if i % 2 == 0 else None) or given[0]
        if fam is None:
            continue
        out.append((title([first, fam]), uid, "variant:slavic", name))
        n += 1
        if n == PER_KIND:
            break

    # variant:entity-typo
    ents = sorted((int(r[0]), r[1].strip()) for r in rows if r[2].strip() == "-0-")
    long8 = [e for e in ents if len(split_words(e[1])) >= 8]
    mid = [e for e in ents if 4 <= len(split_words(e[1])) < 8]
    for i, (uid, name) in enumerate(pick(long8, off, PER_KIND // 2) + pick(mid, off, PER_KIND // 2)):
        ws = split_words(name)
        legal = [j for j, w in enumerate(ws) if w.upper().strip(".,") in LEGAL_WORDS]
        long_idx = [j for j, w in enumerate(ws) if len(w) >= 4 and w.isalpha()]
        if legal and i % 2 == 0:
            j = legal[i // 2 % len(legal)]
        elif long_idx:
            j = long_idx[i % len(long_idx)]
        else:
            continue
        ws[j] = typo(ws[j], i)
        out.append((" ".join(ws).title(), uid, "variant:entity-typo", name))

    # variant:given-typo
    pool = []
    for uid, name, last, given, r in ind:
        if given and 3 <= len(given[0]) <= 6 and given[0].isalpha() and len(last) == 1 and len(last[0]) >= 4:
            pool.append((uid, name, last, given))
    for i, (uid, name, last, given) in enumerate(pick(pool, off)):
        g = given[0].lower()
        p = 1 + i % (len(g) - 1)
        c = g[p]
        rep = VOWEL_NEXT[c] if c in VOWEL_NEXT else NEIGHBOURS.get(c, "e")
        g2 = g[:p] + rep + g[p + 1:]
        out.append((title([g2, last[0]]), uid, "variant:given-typo", name))

    # miss:common-person
    listed = []
    for r in rows:
        listed.append({fold(w) for w in split_words(r[1])})
    with gzip.open(os.path.join(base, "alt_add_comments_2025-12", "alt.csv.gz"), "rt", encoding="utf-8") as f:
        for r in csv.reader(f):
            if len(r) >= 4:
                listed.append({fold(w) for w in split_words(r[3])})
    postings = {}
    for n, l in enumerate(listed):
        for t in l:
            postings.setdefault(t, []).append(n)
    people = []
    for given, sur in ((COMMON_GIVEN_HISP, COMMON_SUR_HISP), (COMMON_GIVEN_ARAB, COMMON_SUR_ARAB)):
        for i in range(len(given) * len(sur)):
            g = given[i % len(given)]
            s1 = sur[(i * 7) % len(sur)]
            s2 = sur[(i * 11 + 5) % len(sur)]
            if s1 != s2:
                people.append((g, s1, s2))
    pool = []
    for g, s1, s2 in people:
        key = {fold(g), fold(s1), fold(s2)}
        if len(key) < 3:
            continue
        shared = {}
        for t in key:
            for n in postings.get(t, ()):
                shared[n] = shared.get(n, 0) + 1
        if shared and max(shared.values()) == 1:
            pool.append(f"{g} {s1} {s2}")
    for q in pick(pool, off):
        out.append((q, 0, "miss:common-person", "-"))
    return out
