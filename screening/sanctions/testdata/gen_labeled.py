#!/usr/bin/env python3
"""Generates names_labeled.tsv, the labeled name-screening set, from the real OFAC list.

Run from this directory, on the repository's copy of the real list (testdata/ofac, gzip-compressed):
  python3 gen_labeled.py ../../../testdata/ofac > names_labeled.tsv       (development set)
  python3 gen_labeled.py ../../../testdata/ofac 13 > names_heldout.tsv    (held-out set: other entries)
Deterministic: no randomness, entries are picked by a fixed stride over uid order, shifted by the optional
offset (the held-out set was generated once and not used to tune the matcher).

Columns: query, expected uid (0 = must not match anything), kind, source name.
Kinds:
  variant:*  a real primary name changed the way a merchant or payee name is changed in practice; the
             entry with that uid must come back (exact or possible).
  miss:*     a name that must not match: a real name with its distinctive word replaced, the given names of a
             real person with another surname, or an ordinary business name sharing common words.
"""
import csv, gzip, sys, os

base = sys.argv[1]
off = int(sys.argv[2]) if len(sys.argv) > 2 else 0
def opensdn(d):
    p = os.path.join(d, 'sdn_csv_2024-05-03', 'sdn.csv')
    return gzip.open(p + '.gz', 'rt', encoding='utf-8') if os.path.exists(p + '.gz') else open(p, encoding='utf-8')
rows = [r for r in csv.reader(opensdn(base)) if len(r) >= 12]
ents = sorted(((int(r[0]), r[1].strip(), r[2].strip()) for r in rows), key=lambda e: e[0])

TRANSLIT = {"MUHAMMAD": "MOHAMMED", "MOHAMMAD": "MUHAMMAD", "MOHAMED": "MUHAMMAD", "MOHAMMED": "MOHAMAD",
            "AHMAD": "AHMED", "AHMED": "AHMAD", "HUSAYN": "HUSSEIN", "HUSSEIN": "HUSAIN", "HUSSAIN": "HUSAYN",
            "ABDUL": "ABDEL", "ABDEL": "ABDUL", "YUSUF": "YOUSSEF", "OSAMA": "USAMA", "USAMA": "OSAMA",
            "VLADIMIR": "WLADIMIR", "ALEKSANDR": "ALEXANDER", "SERGEY": "SERGEI", "SERGEI": "SERGEY",
            "YURIY": "YURI", "DMITRIY": "DMITRY", "MIKHAIL": "MICHAIL", "KHALID": "KHALED", "HASSAN": "HASAN",
            "HASAN": "HASSAN", "MAHMOUD": "MAHMUD", "MAHMUD": "MAHMOUD", "OMAR": "UMAR", "UMAR": "OMAR",
            "IBRAHIM": "EBRAHIM", "HAMID": "HAMEED", "RASHID": "RASHEED", "ALEKSEY": "ALEXEY", "ANDREY": "ANDREI",
            "EVGENIY": "YEVGENY", "YEVGENIY": "EVGENY", "VIKTOR": "VICTOR", "NIKOLAY": "NIKOLAI", "ALI": "ALY",
            "MUSTAFA": "MOSTAFA", "MUSA": "MOUSSA", "YUSIF": "YOUSEF", "ABU": "ABOU", "JAMAL": "GAMAL",
            "FAISAL": "FAYSAL", "HAJJI": "HAJI", "QASIM": "KASIM", "JAFAR": "JAAFAR", "SAID": "SAYED"}
LEGAL = {"LLC", "LTD", "LTD.", "LIMITED", "CO.", "S.A.", "SA", "INC.", "CORP.", "JSC", "OOO", "GMBH"}
CITIES = ["PANAMA", "LISBON", "OSLO", "TORONTO", "NAIROBI", "MANILA", "QUITO", "HELSINKI", "DUBLIN", "PERTH",
          "ZAGREB", "ACCRA", "LIMA", "VIENNA", "SEOUL", "MONTREAL", "SANTIAGO", "BERGEN", "PORTO", "GENOA"]
SURNAMES = ["JOHNSON", "NAKAMURA", "KOWALSKI", "FERREIRA", "OKAFOR", "LINDQVIST", "PETTERSSON", "BECKER",
            "TANAKA", "O'CONNOR", "DUBOIS", "NOVAK", "VAN DIJK", "HANSEN", "SCHMIDT", "MURPHY", "ANDERSEN", "YAMADA",
            "WALKER", "FISCHER"]
BUSINESSES = ["International Trading LLC", "Global Logistics Ltd", "Blue Ocean Shipping Co", "Sunrise Technologies Inc",
              "Green Valley Farms", "Northern Lights Consulting", "Pacific Rim Imports", "Silver Line Transport",
              "United Commerce Group", "First National Bank of Springfield", "Banco Nacional de Panama",
              "General Trading Company", "Metro Payments Inc", "Atlas Software GmbH", "Alpha Capital Partners",
              "Delta Marine Services", "Royal Bakery", "City Hardware Store", "Bright Future Education",
              "Star Electronics Ltd", "Orient Express Travel", "Prime Energy Solutions", "Central Medical Supplies",
              "Ocean Breeze Hotel", "Mountain View Coffee", "Red Rock Mining", "Smart Retail Systems",
              "Universal Media Holdings", "Evergreen Agricultural Cooperative", "Harbor Freight Forwarding",
              "Crystal Clear Water Co", "Apex Construction", "Sunshine Cafe", "New Horizon Investments",
              "Iron Bridge Engineering", "Golden Gate Bakery", "Eastern Textile Mills", "Western Union Bank of Cyprus",
              "Modern Furniture Outlet", "Summit Legal Services", "Open Source Labs", "Rapid Courier Express",
              "Digital Wallet Services", "Crypto Exchange Europe", "Cloud Hosting Provider", "Tech Solutions International",
              "Islamic Relief Bakery", "Al Noor Grocery", "Russian Tea House", "Caspian Caviar Imports"]

def words(name):
    return name.replace(",", " ").split()

DF = {}
for _, name, _ in ents:
    for w in set(x.upper() for x in name.replace(",", " ").replace("-", " ").split()):
        DF[w] = DF.get(w, 0) + 1

def _unused(name):
    return name.replace(",", " ").split()

def typo(w):
    # swap two interior letters of the word (a one-character transposition)
    if len(w) < 5:
        return None
    i = len(w) // 2
    if w[i] == w[i + 1]:
        return None
    return w[:i] + w[i + 1] + w[i] + w[i + 2:]

def given_last(name):
    last, _, given = name.partition(",")
    return given.strip().split(), last.strip().split()

out = []
def emit(q, uid, kind, src):
    out.append((q, uid, kind, src))

indiv = [e for e in ents if e[2] == '"individual"' or e[2] == 'individual']
entity = [e for e in ents if e[2] in ('-0-', '')]

# variant: transliteration substitution (every individual with a substitutable token, strided)
tr = [e for e in indiv if any(w.upper().strip(".") in TRANSLIT for w in words(e[1]))]
for e in tr[off::max(1, len(tr) // 40)][:40]:
    given, last = given_last(e[1])
    toks = [TRANSLIT.get(w.upper(), w) for w in given + last]
    emit(" ".join(t.title() for t in toks), e[0], "variant:transliteration", e[1])

# variant: drop a middle name (individuals with 2+ given names), written "First LAST"
mid = [e for e in indiv if len(given_last(e[1])[0]) >= 2 and len(given_last(e[1])[1]) >= 1]
for e in mid[off::max(1, len(mid) // 30)][:30]:
    given, last = given_last(e[1])
    emit(" ".join([given[0].title()] + [w.title() for w in last]), e[0], "variant:drop-middle", e[1])

# variant: one-character typo in the longest word
cand = [e for e in ents if e[2] != '"vessel"' and e[2] != 'vessel']
n = 0
for e in cand[off::max(1, len(cand) // 60)]:
    ws = words(e[1])
    longest = max(range(len(ws)), key=lambda i: len(ws[i]))
    t = typo(ws[longest])
    if t is None:
        continue
    ws[longest] = t
    if e[2] in ('individual', '"individual"'):
        given, last = given_last(e[1])
        q = " ".join(ws)
    else:
        q = " ".join(ws)
    emit(q.title(), e[0], "variant:typo", e[1])
    n += 1
    if n >= 40:
        break

# variant: order swap ("First LAST" without the comma) and lower case
sw = [e for e in indiv if "," in e[1]]
for e in sw[7+off::max(1, len(sw) // 25)][:25]:
    given, last = given_last(e[1])
    emit(" ".join(given + last).lower(), e[0], "variant:order", e[1])

# variant: tokens joined or split, and legal forms changed (entities with 2-3 distinctive words)
two = [e for e in entity if 2 <= len([w for w in words(e[1]) if w.upper() not in LEGAL]) <= 3]
for e in two[3+off::max(1, len(two) // 30)][:30]:
    core = [w for w in words(e[1]) if w.upper() not in LEGAL]
    emit("".join(w.title() for w in core) + " Limited", e[0], "variant:joined", e[1])

# miss: every distinctive word (used in fewer than 20 names of the list) of an entity name replaced by a
# city, keeping at least two common words: an unrelated name that shares the common words
def common(w):
    return DF.get(w.upper(), 0) >= 20
multi = [e for e in entity if sum(common(w) for w in words(e[1]) if w.upper() not in LEGAL) >= 2
         and any(not common(w) for w in words(e[1]))]
for i, e in enumerate(multi[5+off::max(1, len(multi) // 40)][:40]):
    ws, k = [], 0
    for w in words(e[1]):
        if w.upper() in LEGAL:
            continue
        if common(w):
            ws.append(w)
        else:
            ws.append(CITIES[(i + k) % len(CITIES)])
            k += 1
    emit(" ".join(ws).title(), 0, "miss:replaced-word", e[1])

# miss: a listed person's given names with another surname
gv = [e for e in indiv if len(given_last(e[1])[0]) >= 1]
for i, e in enumerate(gv[11+off::max(1, len(gv) // 40)][:40]):
    given, _ = given_last(e[1])
    emit(" ".join(w.title() for w in given) + " " + SURNAMES[i % len(SURNAMES)].title(), 0, "miss:other-surname", e[1])

# miss: ordinary business names sharing common words with listed entities
for b in BUSINESSES:
    emit(b, 0, "miss:business", "-")

print("# generated by gen_labeled.py (offset %d) from sdn_csv_2024-05-03/sdn.csv; see that script for how" % off)
print("# query\texpected_uid\tkind\tsource")
for q, uid, kind, src in out:
    print(f"{q}\t{uid}\t{kind}\t{src}")
