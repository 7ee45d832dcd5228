#!/usr/bin/env python3
"""Generates names_labeled.tsv, the labeled name-screening set, from the real OFAC list.

Run from this directory, on the repository's copy of the real list (testdata/ofac, gzip-compressed):
  python3 gen_labeled.py ../../../testdata/ofac > names_labeled.tsv       (development set)
  python3 gen_labeled.py ../../../testdata/ofac 13 > names_heldout.tsv    (held-out set: other entries)
  python3 gen_labeled.py ../../../testdata/ofac 5 names_labeled.tsv names_heldout.tsv > names_heldout2.tsv
                                                                          (fresh held-out set, see below)
Deterministic: no randomness, entries are picked by a fixed stride over uid order, shifted by the optional
offset (the held-out set was generated once and not used to tune the matcher).

Columns: query, expected uid (0 = must not match anything), kind, source name.
Kinds:
  variant:*  a real primary name changed the way a merchant or payee name is changed in practice; the
             entry with that uid must come back (exact or possible).
  miss:*     a name that must not match: a real name with its distinctive word replaced, the given names of a
             real person with another surname, an ordinary business name sharing common words, or a common
             person name that is not listed but shares one word with a listed person.
The real-world kinds (variant:hispanic, variant:arabic, variant:slavic, variant:entity-typo,
variant:given-typo, miss:common-person) are built by gen_realworld.py from how people write names; the
development set takes the even positions of each kind's pool, the held-out set the odd ones, so the two
never share an entry.

Fresh held-out set (names_heldout2.tsv): the misses of names_heldout.tsv became known while the matcher was
tuned, so it is no longer a clean held-out set. Given the earlier sets' files after the offset, every pool is
first stripped of the entries those sets used (by uid for variants, by source name for the miss kinds built
from the list, by query for the common person names), the real-world kinds stride over the whole remaining
pool instead of one half, and the ordinary business names are a second list (BUSINESSES_FRESH) that shares
no name with the first. Same rules per kind otherwise. It was generated before any matcher change that
followed, and its misses are not used to tune the matcher.
"""
import csv, gzip, sys, os

base = sys.argv[1]
off = int(sys.argv[2]) if len(sys.argv) > 2 else 0
# Entries used by earlier sets (files given after the offset) are left out of every pool.
EXCL_UID, EXCL_SRC, EXCL_Q = set(), set(), set()
for f in sys.argv[3:]:
    for line in open(f, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        q, uid, kind, src = line.rstrip("\n").split("\t")
        if int(uid):
            EXCL_UID.add(int(uid))
        elif src != "-":
            EXCL_SRC.add(src)
        else:
            EXCL_Q.add(q)
FRESH = bool(sys.argv[3:])
rows = [r for r in csv.reader(gzip.open(os.path.join(base, 'sdn_csv_2024-05-03', 'sdn.csv.gz'), 'rt', encoding='utf-8')) if len(r) >= 12]
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

# A second list of ordinary business names for the fresh held-out set: written without looking at the matcher,
# the same mix (plain trading/logistics/retail names, banks, names with Arabic, Russian or Spanish words).
BUSINESSES_FRESH = ["Continental Freight Services", "Lakeside Dental Clinic", "Pioneer Steel Works",
                    "Harmony Music School", "Banco Popular de Ahorro", "Sahara Date Palm Traders", "Volga Bakery",
                    "Maple Leaf Insurance Agency", "Silverstone Auto Parts", "Coastal Fisheries Cooperative",
                    "Granite State Plumbing", "National Textile Corporation", "Eagle Eye Security Ltd",
                    "Blue Sky Aviation Services", "Oasis Juice Bar", "Cedar Home Furnishings", "Andes Coffee Roasters",
                    "Sapphire Jewellers", "Phoenix Printing Press", "Trans Pacific Container Lines",
                    "Green Leaf Organic Market", "Bridgewater Accounting", "Al Amal Pharmacy", "Dar Al Salam Books",
                    "Hotel Miramar", "Farmacia San Rafael", "Ferreteria El Progreso", "Nova Telecom Group",
                    "Kiev Style Restaurant", "Siberian Timber Export", "Baltic Amber Gallery", "Gulf Star Marine",
                    "Precision Tools Manufacturing", "Riverbend Veterinary Hospital", "Horizon Solar Power",
                    "Metropolitan Property Management", "Lucky Dragon Restaurant", "Alpine Ski Rentals",
                    "Victory Sports Equipment", "Premier Cleaning Services", "Heritage Savings Bank",
                    "Commercial Bank of Ethiopia Branch Office", "Oriental Carpet Company", "Desert Rose Spa",
                    "Union Chemical Industries", "Express Money Transfer", "Falcon Air Cargo",
                    "Sun Valley Dairy Products", "Liberty Travel Agency", "Zenith Medical Laboratories"]

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
def fresh(pool):
    """The pool without the entries (by uid or source name) an earlier set used."""
    return [e for e in pool if e[0] not in EXCL_UID and e[1] not in EXCL_SRC]

# variant: transliteration substitution (every individual with a substitutable token, strided)
tr = fresh([e for e in indiv if any(w.upper().strip(".") in TRANSLIT for w in words(e[1]))])
for e in tr[off::max(1, len(tr) // 40)][:40]:
    given, last = given_last(e[1])
    toks = [TRANSLIT.get(w.upper(), w) for w in given + last]
    emit(" ".join(t.title() for t in toks), e[0], "variant:transliteration", e[1])

# variant: drop a middle name (individuals with 2+ given names), written "First LAST"
mid = fresh([e for e in indiv if len(given_last(e[1])[0]) >= 2 and len(given_last(e[1])[1]) >= 1])
for e in mid[off::max(1, len(mid) // 30)][:30]:
    given, last = given_last(e[1])
    emit(" ".join([given[0].title()] + [w.title() for w in last]), e[0], "variant:drop-middle", e[1])

# variant: one-character typo in the longest word
cand = fresh([e for e in ents if e[2] != '"vessel"' and e[2] != 'vessel'])
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
sw = fresh([e for e in indiv if "," in e[1]])
for e in sw[7+off::max(1, len(sw) // 25)][:25]:
    given, last = given_last(e[1])
    emit(" ".join(given + last).lower(), e[0], "variant:order", e[1])

# variant: tokens joined or split, and legal forms changed (entities with 2-3 distinctive words)
two = fresh([e for e in entity if 2 <= len([w for w in words(e[1]) if w.upper() not in LEGAL]) <= 3])
for e in two[3+off::max(1, len(two) // 30)][:30]:
    core = [w for w in words(e[1]) if w.upper() not in LEGAL]
    emit("".join(w.title() for w in core) + " Limited", e[0], "variant:joined", e[1])

# miss: every distinctive word (used in fewer than 20 names of the list) of an entity name replaced by a
# city, keeping at least two common words: an unrelated name that shares the common words
def common(w):
    return DF.get(w.upper(), 0) >= 20
multi = fresh([e for e in entity if sum(common(w) for w in words(e[1]) if w.upper() not in LEGAL) >= 2
               and any(not common(w) for w in words(e[1]))])
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
gv = fresh([e for e in indiv if len(given_last(e[1])[0]) >= 1])
for i, e in enumerate(gv[11+off::max(1, len(gv) // 40)][:40]):
    given, _ = given_last(e[1])
    emit(" ".join(w.title() for w in given) + " " + SURNAMES[i % len(SURNAMES)].title(), 0, "miss:other-surname", e[1])

# miss: ordinary business names sharing common words with listed entities
for b in (BUSINESSES_FRESH if FRESH else BUSINESSES):
    emit(b, 0, "miss:business", "-")

import gen_realworld
out.extend(gen_realworld.cases(base, rows, off, (EXCL_UID, EXCL_Q) if FRESH else None))

print("# generated by gen_labeled.py (offset %d%s) from sdn_csv_2024-05-03/sdn.csv; see that script for how"
      % (off, ", without the entries of " + " and ".join(os.path.basename(f) for f in sys.argv[3:]) if FRESH else ""))
print("# query\texpected_uid\tkind\tsource")
for q, uid, kind, src in out:
    print(f"{q}\t{uid}\t{kind}\t{src}")
