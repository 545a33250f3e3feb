# Reads `protoc --decode=firn.test.otlp.ExportProfilesServiceRequest` text (stdin) of a request
# firn sent and checks it as an OTLP consumer would (opentelemetry-proto v1.11.0's rules): every
# table's element 0 is the zero value, every index is in its table, each Profile's samples have
# one value. Prints "error: ..." lines for what is wrong, then what the request says:
#   attr KEY=VALUE                      (resource attributes)
#   profile TYPE/UNIT TIME DURATION N TOTAL   (per Profile: its samples' count and value sum)
#   sample_attrs KEY,KEY...            (the attribute keys samples carry)
#   leaf NAME COUNT                      (leaf functions of the first Profile, by samples)
#   frame_types TYPE,TYPE...           (the locations' profile.frame.type values)
import collections, sys

def parse(lines):
    stack = [collections.defaultdict(list)]
    for raw in lines:
        s = raw.strip()
        if not s:
            continue
        if s == '}':
            stack.pop()
        elif s.endswith('{'):
            m = collections.defaultdict(list)
            stack[-1][s[:-1].strip()].append(m)
            stack.append(m)
        else:
            k, v = s.split(':', 1)
            v = v.strip()
            if v.startswith('"'):
                v = v[1:-1].encode('latin1').decode('unicode_escape').encode('latin1').decode('utf8', 'replace')
            else:
                v = int(v) if v.lstrip('-').isdigit() else v
            stack[-1][k].append(v)
    return stack[0]

def one(m, k, default=0):
    return m[k][0] if m.get(k) else default

req = parse(sys.stdin)
errors = []
d = one(req, 'dictionary', {})
strings = d.get('string_table', [])
tables = {t: d.get(t, []) for t in ('mapping_table', 'location_table', 'function_table', 'link_table',
                                    'attribute_table', 'stack_table')}
if not strings or strings[0] != '':
    errors.append('string_table[0] is not ""')
for t, rows in tables.items():
    if not rows:
        errors.append(f'{t} has no element 0')
    elif t != 'link_table' and any(rows[0].values()):
        errors.append(f'{t}[0] is not the zero value: {dict(rows[0])}')

def check(i, t, what):
    n = len(strings) if t == 'string_table' else len(tables[t])
    if not 0 <= i < n:
        errors.append(f'{what}: index {i} past {t} ({n})')
        return False
    return True

s = lambda i: strings[i] if 0 <= i < len(strings) else '?'
for f in tables['function_table']:
    for k in ('name_strindex', 'system_name_strindex', 'filename_strindex'):
        check(one(f, k), 'string_table', 'function ' + k)
for m in tables['mapping_table']:
    check(one(m, 'filename_strindex'), 'string_table', 'mapping filename')
    for a in m.get('attribute_indices', []):
        check(a, 'attribute_table', 'mapping attribute')
for l in tables['location_table']:
    check(one(l, 'mapping_index'), 'mapping_table', 'location mapping')
    for ln in l.get('lines', []):
        check(one(ln, 'function_index'), 'function_table', 'line function')
for st in tables['stack_table']:
    for i in st.get('location_indices', []):
        check(i, 'location_table', 'stack location')
for a in tables['attribute_table'][1:]:
    check(one(a, 'key_strindex'), 'string_table', 'attribute key')

def leaf_name(stack_i):
    locs = tables['stack_table'][stack_i].get('location_indices', [])
    if not locs:
        return '[empty]'
    lines = tables['location_table'][locs[0]].get('lines', [])
    return s(one(tables['function_table'][one(lines[0], 'function_index')], 'name_strindex')) if lines else '[no line]'

out = []
for rp in req.get('resource_profiles', []):
    for kv in one(rp, 'resource', {}).get('attributes', []):
        out.append(f"attr {one(kv, 'key', '')}={one(one(kv, 'value', {}), 'string_value', '')}")
    first = True
    for sp in rp.get('scope_profiles', []):
        for p in sp.get('profiles', []):
            st = one(p, 'sample_type', {})
            total, keys, leaves = 0, set(), collections.Counter()
            for smp in p.get('samples', []):
                vals = smp.get('values', [])
                if len(vals) != 1:
                    errors.append(f'a sample with {len(vals)} values')
                total += sum(vals)
                if check(one(smp, 'stack_index'), 'stack_table', 'sample stack') and first:
                    leaves[leaf_name(one(smp, 'stack_index'))] += sum(vals)
                for a in smp.get('attribute_indices', []):
                    if check(a, 'attribute_table', 'sample attribute'):
                        keys.add(s(one(tables['attribute_table'][a], 'key_strindex')))
            out.append(f"profile {s(one(st, 'type_strindex'))}/{s(one(st, 'unit_strindex'))} "
                       f"{one(p, 'time_unix_nano')} {one(p, 'duration_nano')} {len(p.get('samples', []))} {total}")
            if first:
                out.append('sample_attrs ' + ','.join(sorted(keys)))
                out += [f'leaf {n} {c}' for n, c in leaves.most_common(5)]
            first = False
types = set()
for l in tables['location_table']:
    for a in l.get('attribute_indices', []):
        if check(a, 'attribute_table', 'location attribute'):
            kv = tables['attribute_table'][a]
            if s(one(kv, 'key_strindex')) == 'profile.frame.type':
                types.add(one(one(kv, 'value', {}), 'string_value', ''))
out.append('frame_types ' + ','.join(sorted(types)))
for e in errors[:10]:
    print('error:', e)
print('\n'.join(out))
