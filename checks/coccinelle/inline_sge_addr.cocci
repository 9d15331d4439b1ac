// SPDX-License-Identifier: GPL-2.0-only
/// An SGE of a work request posted with IB_SEND_INLINE must hold a kernel
/// virtual address: the CPU copies the payload from it into the WQE. A DMA
/// address (ib_dma_map_*(), dma_map_*(), sg_dma_address(), a dma_addr_t) or
/// a physical one (__pa(), virt_to_phys(), page_to_phys(), sg_phys(), a
/// phys_addr_t) there passes on soft-RoCE (rxe and siw use virtual DMA)
/// and corrupts memory on a real HCA. Reported at the post a path reaches
/// with the flag set and the address not re-pointed: ib_post_send(), or
/// a helper of the file that posts the request it is handed.
///
/// This is the Coccinelle form of patchctl's inline-sge-addr rule (the
/// errors; its "cannot show the address is virtual" warnings have no
/// counterpart here). Coccinelle follows every path of the control-flow
/// graph but not the values of conditions, so a path that tests the same
/// condition twice is taken both ways.
//
// Confidence: Moderate
// Options: --no-includes --include-headers

virtual report

@initialize:python@
@@
import re

# What each file says about addresses and flags, by name: the fields and
# variables that hold DMA or physical addresses, the helpers that return
# one, the helpers that set IB_SEND_INLINE, and the request templates that
# carry it. Filled by the rules below, file by file.
facts = {}

MAP = {"ib_dma_map_single", "ib_dma_map_page", "ib_dma_map_sg", "dma_map_single",
       "dma_map_page", "dma_map_resource", "sg_dma_address", "ib_sg_dma_address"}
PHYS = {"__pa", "__pa_symbol", "virt_to_phys", "page_to_phys", "sg_phys"}

def reset():
    facts.clear()
    for k in ("dma", "dmaret", "flagfn", "flagtmpl", "poster"):
        facts[k] = set()

reset()

CAST = re.compile(r"^\(\s*(?:const\s+)?(?:unsigned\s+)?[A-Za-z_]\w*(?:\s*\*)*\s*\)\s*")

def strip(e):
    e = e.strip()
    while True:
        m = CAST.match(e)
        if m and len(e) > m.end():
            e = e[m.end():].strip()
            continue
        if e.startswith("(") and matching(e) == len(e) - 1:
            e = e[1:-1].strip()
            continue
        return e

def matching(e):
    depth = 0
    for i, c in enumerate(e):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                return i
    return -1

def top_split(e, seps):
    """Splits e at the operators in seps outside parentheses ("->" is no
    minus)."""
    out, depth, cur = [], 0, ""
    for i, c in enumerate(e):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        arrow = c == "-" and e[i + 1:i + 2] == ">"
        if depth == 0 and c in seps and not arrow:
            out.append(cur)
            cur = ""
            continue
        cur += c
    out.append(cur)
    return out

def is_dma(e):
    """Whether an address expression holds a DMA or physical address:
    casts and arithmetic keep the kind (the base decides), either arm of
    a ternary may be taken."""
    e = strip(e)
    arms = top_split(e, "?:")
    if len(arms) == 3:
        return is_dma(arms[1]) or is_dma(arms[2])
    e = strip(top_split(e, "+-")[0])
    m = re.match(r"^([A-Za-z_]\w*)\s*\(", e)
    if m:
        return m.group(1) in MAP or m.group(1) in PHYS or m.group(1) in facts["dmaret"]
    m = re.search(r"(?:->|\.)\s*([A-Za-z_]\w*)$", e)
    if m:
        return m.group(1) in facts["dma"]
    return e in facts["dma"]

@script:python depends on report@
@@
reset()

// Fields and variables declared to hold DMA or physical addresses.
@dmafield depends on report@
identifier s, f;
typedef dma_addr_t, phys_addr_t;
type T = {dma_addr_t, phys_addr_t};
@@
struct s { ... T f; ... };

@script:python depends on dmafield@
f << dmafield.f;
@@
facts["dma"].add(f)

@dmavar depends on report@
identifier x;
typedef dma_addr_t, phys_addr_t;
type T = {dma_addr_t, phys_addr_t};
@@
(
T x;
|
T x = ...;
)

@script:python depends on dmavar@
x << dmavar.x;
@@
facts["dma"].add(x)

@dmaparam depends on report@
identifier fn, x;
typedef dma_addr_t, phys_addr_t;
type T = {dma_addr_t, phys_addr_t};
@@
fn(..., T x, ...) { ... }

@script:python depends on dmaparam@
x << dmaparam.x;
@@
facts["dma"].add(x)

// Helpers that return a DMA or physical address.
@dmaret depends on report@
identifier fn;
typedef dma_addr_t, phys_addr_t;
type T = {dma_addr_t, phys_addr_t};
@@
T fn(...) { ... }

@script:python depends on dmaret@
fn << dmaret.fn;
@@
facts["dmaret"].add(fn)

// Fields assigned a mapping, or what holds one, anywhere in the file (a
// field is learned by name, as the engine learns it per module). A local
// holds what the path assigned it: the rules below follow it.
@dmaset depends on report@
expression E, V;
identifier f;
@@
(
E->f = V
|
E.f = V
)

@script:python depends on dmaset@
v << dmaset.V;
f << dmaset.f;
@@
if is_dma(v):
    facts["dma"].add(f)

// Helpers that set IB_SEND_INLINE on what they are given, or return it.
@flagfn depends on report exists@
identifier fn;
expression E, X, V;
@@
fn(...) {
... when != X.addr = V
    when != X->addr = V
(
E |= IB_SEND_INLINE
|
E = <+... IB_SEND_INLINE ...+>
)
... when != X.addr = V
    when != X->addr = V
}

@script:python depends on flagfn@
fn << flagfn.fn;
@@
facts["flagfn"].add(fn)

@flagret depends on report@
identifier fn;
@@
fn(...) {
<+...
return <+... IB_SEND_INLINE ...+>;
...+>
}

@script:python depends on flagret@
fn << flagret.fn;
@@
facts["flagfn"].add(fn)

// Request templates that carry the flag.
@flagtmpl depends on report@
identifier t;
expression F;
@@
(
struct ib_send_wr t = { ..., .send_flags = F, ... };
|
static struct ib_send_wr t = { ..., .send_flags = F, ... };
|
static const struct ib_send_wr t = { ..., .send_flags = F, ... };
|
const struct ib_send_wr t = { ..., .send_flags = F, ... };
)

@script:python depends on flagtmpl@
t << flagtmpl.t;
f << flagtmpl.F;
@@
if "IB_SEND_INLINE" in f and "~" not in f:
    facts["flagtmpl"].add(t)

// Helpers that post the request they are handed.
@poster depends on report@
identifier fn, w;
type T;
expression Q, B;
@@
fn(..., T *w, ...) {
<+...
ib_post_send(Q, <+... w ...+>, B)
...+>
}

@script:python depends on poster@
fn << poster.fn;
@@
facts["poster"].add(fn)

// The address first, the flag on the way to the post.
@addr_then_flag depends on report exists@
expression S, V, E, E1, E2, E3, Q, W, B;
expression A : script:python () { is_dma(A) };
identifier fn : script:python () { fn in facts["flagfn"] };
identifier t : script:python () { t in facts["flagtmpl"] };
identifier post : script:python () { post in facts["poster"] };
position p;
@@
(
S.addr = A;
|
S->addr = A;
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
(
E |= IB_SEND_INLINE
|
E |= IB_SEND_INLINE | E3
|
E |= E3 | IB_SEND_INLINE
|
E = <+... IB_SEND_INLINE ...+>
|
fn(...)
|
E = t
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
    when != E2 &= ~IB_SEND_INLINE
\(ib_post_send@p(Q, W, B)\|post@p(...)\)

// The flag first, the address on the way to the post.
@flag_then_addr depends on report exists@
expression S, V, E, E1, E2, E3, Q, W, B;
expression A : script:python () { is_dma(A) };
identifier fn : script:python () { fn in facts["flagfn"] };
identifier t : script:python () { t in facts["flagtmpl"] };
identifier post : script:python () { post in facts["poster"] };
position p;
@@
(
E |= IB_SEND_INLINE
|
E |= IB_SEND_INLINE | E3
|
E |= E3 | IB_SEND_INLINE
|
E = <+... IB_SEND_INLINE ...+>
|
fn(...)
|
E = t
)
... when != E2 &= ~IB_SEND_INLINE
(
S.addr = A;
|
S->addr = A;
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
    when != E2 &= ~IB_SEND_INLINE
\(ib_post_send@p(Q, W, B)\|post@p(...)\)

// Through a local that holds a DMA or physical address on the path
// (u64 a = qe->dma; ... sge->addr = a;): the local, the address, the flag.
@local_addr_flag depends on report exists@
identifier x;
type T, T2;
expression S, V, V2, E, E1, E2, E3, Q, W, B;
expression A : script:python () { is_dma(A) };
identifier fn : script:python () { fn in facts["flagfn"] };
identifier t : script:python () { t in facts["flagtmpl"] };
identifier post : script:python () { post in facts["poster"] };
position p;
@@
(
x = A;
|
T x = A;
)
... when != x = V2
    when != T2 x = V2;
(
S.addr = <+... x ...+>;
|
S->addr = <+... x ...+>;
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
    when != E2 &= ~IB_SEND_INLINE
    when != x = V2
    when != T2 x = V2;
(
E |= IB_SEND_INLINE
|
E |= IB_SEND_INLINE | E3
|
E |= E3 | IB_SEND_INLINE
|
E = <+... IB_SEND_INLINE ...+>
|
fn(...)
|
E = t
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
    when != E2 &= ~IB_SEND_INLINE
    when != x = V2
    when != T2 x = V2;
\(ib_post_send@p(Q, W, B)\|post@p(...)\)

// The local, the flag, the address.
@local_flag_addr depends on report exists@
identifier x;
type T, T2;
expression S, V, V2, E, E1, E2, E3, Q, W, B;
expression A : script:python () { is_dma(A) };
identifier fn : script:python () { fn in facts["flagfn"] };
identifier t : script:python () { t in facts["flagtmpl"] };
identifier post : script:python () { post in facts["poster"] };
position p;
@@
(
x = A;
|
T x = A;
)
... when != x = V2
    when != T2 x = V2;
(
E |= IB_SEND_INLINE
|
E |= IB_SEND_INLINE | E3
|
E |= E3 | IB_SEND_INLINE
|
E = <+... IB_SEND_INLINE ...+>
|
fn(...)
|
E = t
)
... when != x = V2
    when != T2 x = V2;
    when != E2 &= ~IB_SEND_INLINE
(
S.addr = <+... x ...+>;
|
S->addr = <+... x ...+>;
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
    when != E2 &= ~IB_SEND_INLINE
    when != x = V2
    when != T2 x = V2;
\(ib_post_send@p(Q, W, B)\|post@p(...)\)

// The flag, the local, the address.
@flag_local_addr depends on report exists@
identifier x;
type T, T2;
expression S, V, V2, E, E1, E2, E3, Q, W, B;
expression A : script:python () { is_dma(A) };
identifier fn : script:python () { fn in facts["flagfn"] };
identifier t : script:python () { t in facts["flagtmpl"] };
identifier post : script:python () { post in facts["poster"] };
position p;
@@
(
E |= IB_SEND_INLINE
|
E |= IB_SEND_INLINE | E3
|
E |= E3 | IB_SEND_INLINE
|
E = <+... IB_SEND_INLINE ...+>
|
fn(...)
|
E = t
)
... when != E2 &= ~IB_SEND_INLINE
(
x = A;
|
T x = A;
)
... when != x = V2
    when != T2 x = V2;
    when != E2 &= ~IB_SEND_INLINE
(
S.addr = <+... x ...+>;
|
S->addr = <+... x ...+>;
)
... when != S.addr = V
    when != S->addr = V
    when != E1->sg_list->addr = V
    when != E1.sg_list->addr = V
    when != E2 &= ~IB_SEND_INLINE
    when != x = V2
    when != T2 x = V2;
\(ib_post_send@p(Q, W, B)\|post@p(...)\)

@script:python depends on addr_then_flag@
p << addr_then_flag.p;
a << addr_then_flag.A;
@@
coccilib.report.print_report(p[0], "inline-sge-addr: a work request posted with IB_SEND_INLINE carries an SGE holding a DMA or physical address (%s) on this path: the CPU copies from it, so it must be a kernel virtual address" % a)

@script:python depends on flag_then_addr@
p << flag_then_addr.p;
a << flag_then_addr.A;
@@
coccilib.report.print_report(p[0], "inline-sge-addr: a work request posted with IB_SEND_INLINE carries an SGE holding a DMA or physical address (%s) on this path: the CPU copies from it, so it must be a kernel virtual address" % a)

@script:python depends on local_addr_flag@
p << local_addr_flag.p;
a << local_addr_flag.A;
x << local_addr_flag.x;
@@
coccilib.report.print_report(p[0], "inline-sge-addr: a work request posted with IB_SEND_INLINE carries an SGE holding a DMA or physical address (%s, from %s) on this path: the CPU copies from it, so it must be a kernel virtual address" % (x, a))

@script:python depends on local_flag_addr@
p << local_flag_addr.p;
a << local_flag_addr.A;
x << local_flag_addr.x;
@@
coccilib.report.print_report(p[0], "inline-sge-addr: a work request posted with IB_SEND_INLINE carries an SGE holding a DMA or physical address (%s, from %s) on this path: the CPU copies from it, so it must be a kernel virtual address" % (x, a))

@script:python depends on flag_local_addr@
p << flag_local_addr.p;
a << flag_local_addr.A;
x << flag_local_addr.x;
@@
coccilib.report.print_report(p[0], "inline-sge-addr: a work request posted with IB_SEND_INLINE carries an SGE holding a DMA or physical address (%s, from %s) on this path: the CPU copies from it, so it must be a kernel virtual address" % (x, a))
