// SPDX-License-Identifier: GPL-2.0-only
/// IB_SEND_INLINE on a registration (IB_WR_REG_MR, IB_WR_REG_MR_INTEGRITY)
/// or invalidation (IB_WR_LOCAL_INV) work request: such a request carries
/// no payload to copy, and providers reject the flag on it (mlx5 fails the
/// post with -EINVAL). Reported at the post a path reaches with both the
/// opcode and the flag on the same request, wherever the opcode was set:
/// on the path, by a helper handed the request, by a file-scope template
/// copied into it, or by another function of the file for the same
/// request (req->reg_wr.wr); the flag may be set through a pointer to it
/// (first = &req->reg_wr.wr; first->send_flags |= ...). A function that
/// sets both and posts nothing stores the request for a later post: it
/// is reported where the function returns.
///
/// This is the Coccinelle form of patchctl's inline-on-registration rule.
//
// Confidence: Moderate
// Options: --no-includes --include-headers

virtual report

@initialize:python@
@@
import re

# Per file: helpers that give the request they are handed a registration
# opcode, templates that carry one, and requests (by their text) that get
# one anywhere in the file.
facts = {}

def reset():
    facts.clear()
    for k in ("regfn", "regtmpl", "regwr", "regtmplm", "regmember"):
        facts[k] = set()

reset()

def norm(e):
    return re.sub(r"\s+", "", e)

@script:python depends on report@
@@
reset()

@regfn depends on report@
identifier fn, wr;
type T;
@@
fn(..., T *wr, ...) {
<+...
wr->opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
...+>
}

@script:python depends on regfn@
fn << regfn.fn;
@@
facts["regfn"].add(fn)

@regtmpl depends on report@
identifier t;
type T;
@@
(
T t = { ..., .opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\), ... };
|
static T t = { ..., .opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\), ... };
|
static const T t = { ..., .opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\), ... };
)

@script:python depends on regtmpl@
t << regtmpl.t;
@@
facts["regtmpl"].add(t)

// A template whose member request (struct ib_reg_wr's .wr) has the
// opcode, and the members that have it.
@regtmplm depends on report@
identifier t, f;
type T;
@@
(
T t = { ..., .f = { ..., .opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\), ... }, ... };
|
static T t = { ..., .f = { ..., .opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\), ... }, ... };
|
static const T t = { ..., .f = { ..., .opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\), ... }, ... };
)

@script:python depends on regtmplm@
t << regtmplm.t;
f << regtmplm.f;
@@
facts["regtmplm"].add(t)
facts["regmember"].add(f)

@regwr depends on report@
expression W;
@@
(
W.opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
|
W->opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
)

@script:python depends on regwr@
w << regwr.W;
@@
facts["regwr"].add(norm(w))

// The opcode on the path (set, by a helper, from a template), then the
// flag on the same request, then the post.
@reg_then_flag depends on report exists@
expression W, E, Q, R, B;
identifier fn : script:python () { fn in facts["regfn"] };
identifier t : script:python () { t in facts["regtmpl"] };
position p;
@@
(
W.opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
|
fn(..., &W, ...)
|
W = t
)
... when != W.opcode = E
(
W.send_flags |= <+... IB_SEND_INLINE ...+>
|
W.send_flags = <+... IB_SEND_INLINE ...+>
)
... when != W.send_flags &= ~IB_SEND_INLINE
    when != W.send_flags = E
ib_post_send@p(Q, R, B)

// A copy of a template whose member request has the opcode, the flag on
// that member.
@tmpl_member depends on report exists@
expression W, E, Q, R, B;
identifier t : script:python () { t in facts["regtmplm"] };
identifier mem : script:python () { mem in facts["regmember"] };
position p;
@@
W = t
... when != W.mem.opcode = E
(
W.mem.send_flags |= <+... IB_SEND_INLINE ...+>
|
W.mem.send_flags = <+... IB_SEND_INLINE ...+>
)
... when != W.mem.send_flags &= ~IB_SEND_INLINE
    when != W.mem.send_flags = E
ib_post_send@p(Q, R, B)

// The flag first, then the opcode, then the post.
@flag_then_reg depends on report exists@
expression W, E, Q, R, B;
identifier fn : script:python () { fn in facts["regfn"] };
position p;
@@
(
W.send_flags |= <+... IB_SEND_INLINE ...+>
|
W.send_flags = <+... IB_SEND_INLINE ...+>
)
... when != W.send_flags &= ~IB_SEND_INLINE
    when != W.send_flags = E
(
W.opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
|
fn(..., &W, ...)
)
... when != W.send_flags &= ~IB_SEND_INLINE
    when != W.send_flags = E
ib_post_send@p(Q, R, B)

// Both in a function that does not post: the request is stored for a
// later post (req->reg_wr in the request), reported where the function
// leaves with it.
@stored depends on report exists@
expression W, E, E2;
position p;
@@
W.opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
... when != W.opcode = E
    when != ib_post_send(...)
(
W.send_flags |= <+... IB_SEND_INLINE ...+>
|
W.send_flags = <+... IB_SEND_INLINE ...+>
)
... when != W.send_flags &= ~IB_SEND_INLINE
    when != W.send_flags = E2
    when != ib_post_send(...)
return@p ...;

@stored2 depends on report exists@
expression W, E, E2;
position p;
@@
(
W.send_flags |= <+... IB_SEND_INLINE ...+>
|
W.send_flags = <+... IB_SEND_INLINE ...+>
)
... when != W.send_flags &= ~IB_SEND_INLINE
    when != W.send_flags = E
    when != ib_post_send(...)
W.opcode = \(IB_WR_REG_MR\|IB_WR_REG_MR_INTEGRITY\|IB_WR_LOCAL_INV\)
... when != W.send_flags &= ~IB_SEND_INLINE
    when != W.send_flags = E2
    when != ib_post_send(...)
return@p ...;

// A request another function of the file gives the opcode, flagged here
// directly or through a pointer to it.
@flag_far depends on report exists@
expression W : script:python () { norm(W) in facts["regwr"] };
expression Q, R, B;
position p;
@@
(
W.send_flags |= <+... IB_SEND_INLINE ...+>
|
W.send_flags = <+... IB_SEND_INLINE ...+>
)
... when != W.send_flags &= ~IB_SEND_INLINE
ib_post_send@p(Q, R, B)

@flag_far_ptr depends on report exists@
expression W : script:python () { norm(W) in facts["regwr"] };
expression P, E, Q, R, B;
position p;
@@
P = &W;
... when != P = E
(
P->send_flags |= <+... IB_SEND_INLINE ...+>
|
P->send_flags = <+... IB_SEND_INLINE ...+>
)
... when != P->send_flags &= ~IB_SEND_INLINE
ib_post_send@p(Q, R, B)

@script:python depends on reg_then_flag@
p << reg_then_flag.p;
w << reg_then_flag.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on the registration or invalidation request %s posted here: providers reject it (mlx5: -EINVAL)" % w)

@script:python depends on flag_then_reg@
p << flag_then_reg.p;
w << flag_then_reg.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on the registration or invalidation request %s posted here: providers reject it (mlx5: -EINVAL)" % w)

@script:python depends on flag_far@
p << flag_far.p;
w << flag_far.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on the registration or invalidation request %s posted here: providers reject it (mlx5: -EINVAL)" % w)

@script:python depends on flag_far_ptr@
p << flag_far_ptr.p;
w << flag_far_ptr.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on the registration or invalidation request %s posted here: providers reject it (mlx5: -EINVAL)" % w)

@script:python depends on tmpl_member@
p << tmpl_member.p;
w << tmpl_member.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on a member request of %s, a copy of a registration template, posted here: providers reject it (mlx5: -EINVAL)" % w)

@script:python depends on stored@
p << stored.p;
w << stored.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on the registration or invalidation request %s, stored for a later post here: providers reject it (mlx5: -EINVAL)" % w)

@script:python depends on stored2@
p << stored2.p;
w << stored2.W;
@@
coccilib.report.print_report(p[0], "inline-on-registration: IB_SEND_INLINE on the registration or invalidation request %s, stored for a later post here: providers reject it (mlx5: -EINVAL)" % w)
