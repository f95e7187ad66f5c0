#!/usr/bin/env python3
# Compares two JUnit XML reports of the same client test suite, one run against dockerd and one
# against engined: lists the tests dockerd passes and engined does not (the places where a client
# gets a different answer), and the other way round. Usage: diff.py dockerd.xml engined.xml
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    out = {}
    for tc in ET.parse(path).getroot().iter('testcase'):
        name = f"{tc.get('classname')}::{tc.get('name')}"
        state, message = 'pass', ''
        for kind in ('failure', 'error', 'skipped'):
            e = tc.find(kind)
            if e is not None:
                state, message = kind, (e.get('message') or '').replace('\n', ' ')[:240]
        out[name] = (state, message)
    return out


dockerd, engined = outcomes(sys.argv[1]), outcomes(sys.argv[2])
both = sorted(set(dockerd) & set(engined))
worse = [n for n in both if dockerd[n][0] == 'pass' and engined[n][0] in ('failure', 'error')]
better = [n for n in both if engined[n][0] == 'pass' and dockerd[n][0] in ('failure', 'error')]
print(f'{len(both)} tests in both runs; dockerd passes and engined does not: {len(worse)}; the other way: {len(better)}')
for n in worse:
    print(f'  - {n}: {engined[n][1]}')
if better:
    print('engined passes and dockerd does not:')
    for n in better:
        print(f'  + {n}: {dockerd[n][1]}')
