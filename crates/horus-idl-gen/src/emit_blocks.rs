//! Runs of consecutive scalar members written and read as one block: one bounds check
//! (and, for reading, one `take`) per run instead of one per member.
//!
//! A run starts at a scalar member and goes on while the next member is a scalar aligned
//! no more strictly than the first. The block starts aligned to the first member's
//! alignment, which every later alignment divides, so padding computed from the block's
//! start is exactly the padding CDR puts there, wherever the block lands in the message.
//! Writing and reading use the same runs for numbers; the writer also puts `bool`s in its
//! blocks, the readers do not (a `bool` that is not 0 or 1 is an error at its own offset).

use horus_idl::{ArrayKind, Member, StructDef};

use crate::error::GenError;
use crate::names::field_ident;
use crate::types::{primitive_rust, primitive_size, Elem};

/// Size (and CDR alignment) of a single numeric member, or of a single `bool` if `bools`;
/// `None` for anything else (and for the placeholder of an empty structure).
fn scalar_size(m: &Member, bools: bool) -> Option<usize> {
    if m.placeholder || m.member_type.array != ArrayKind::Single {
        return None;
    }
    match Elem::of(m) {
        Elem::Num(p) => Some(primitive_size(p)),
        Elem::Bool if bools => Some(1),
        _ => None,
    }
}

/// How many members from the first form a block (0 or 1: none worth making).
fn run_len(members: &[Member], bools: bool) -> usize {
    let Some(first) = members.first().and_then(|m| scalar_size(m, bools)) else {
        return 0;
    };
    members
        .iter()
        .take_while(|m| scalar_size(m, bools).is_some_and(|a| a <= first))
        .count()
}

/// Each member of a run with its offset and size in the block, and the block's size.
fn layout(run: &[Member], bools: bool) -> (Vec<(&Member, usize, usize)>, usize) {
    let mut off = 0usize;
    let placed = run
        .iter()
        .map(|m| {
            let size = scalar_size(m, bools).expect("a run holds scalars");
            let at = off.next_multiple_of(size);
            off = at + size;
            (m, at, size)
        })
        .collect();
    (placed, off)
}

/// The statements of `write_cdr`: a `write_block` per run, `member(m)` for the rest.
pub(crate) fn write_stmts(def: &StructDef, member: impl Fn(&Member) -> String) -> Vec<String> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < def.members.len() {
        let n = run_len(&def.members[k..], true);
        if n < 2 {
            out.push(member(&def.members[k]));
            k += 1;
            continue;
        }
        let run = &def.members[k..k + n];
        let align = scalar_size(&run[0], true).expect("a run starts with a scalar");
        let (placed, size) = layout(run, true);
        let mut body = String::new();
        let mut end = 0;
        for (m, at, len) in placed {
            if at > end {
                body.push_str(&format!("b[{end}..{at}].fill(0); "));
            }
            let f = field_ident(&m.name);
            match Elem::of(m) {
                Elem::Bool => body.push_str(&format!("b[{at}] = self.{f} as u8; ")),
                _ => body.push_str(&format!(
                    "b[{at}..{}].copy_from_slice(&self.{f}.to_le_bytes()); ",
                    at + len
                )),
            }
            end = at + len;
        }
        out.push(format!(
            "w.write_block::<{size}>({align}, |b| {{ {body}}})?;"
        ));
        k += n;
    }
    out
}

/// The local holding member `m`'s value while a structure is read.
pub(crate) fn local(m: &Member) -> String {
    format!("v_{}", m.name)
}

/// The statements of a reader (`read_cdr` or `read_view`): one `let` per field, named
/// [`local`], in member order — a `read_block` per run of numbers, `member(m)` (an
/// expression) for the rest; the placeholder byte of an empty structure read and dropped.
pub(crate) fn read_stmts(
    rt: &str,
    def: &StructDef,
    member: impl Fn(&Member) -> Result<String, GenError>,
) -> Result<Vec<String>, GenError> {
    let mut out = Vec::new();
    let mut k = 0;
    let mut blocks = 0;
    while k < def.members.len() {
        let m = &def.members[k];
        if m.placeholder {
            out.push("let _: u8 = r.read()?;".into());
            k += 1;
            continue;
        }
        let n = run_len(&def.members[k..], false);
        if n < 2 {
            out.push(format!("let {} = {};", local(m), member(m)?));
            k += 1;
            continue;
        }
        let run = &def.members[k..k + n];
        let align = scalar_size(&run[0], false).expect("a run starts with a scalar");
        let (placed, size) = layout(run, false);
        let blk = format!("blk{blocks}");
        blocks += 1;
        out.push(format!("let {blk} = r.read_block::<{size}>({align})?;"));
        for (m, at, len) in placed {
            let Elem::Num(p) = Elem::of(m) else {
                unreachable!("read runs hold numbers only")
            };
            out.push(format!(
                "let {} = <{} as {rt}::CdrPrimitive>::from_le(&{blk}[{at}..{}]);",
                local(m),
                primitive_rust(p),
                at + len
            ));
        }
        k += n;
    }
    Ok(out)
}
