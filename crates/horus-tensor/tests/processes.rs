//! Pools shared between real processes (this test binary re-run as a peer):
//! a tensor allocated in one process is read in another, a holder killed
//! with SIGKILL has its references reclaimed, and the last process out
//! unlinks the pool — whichever process that is.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use common::{pool_path, small, unique_ns};
use horus_tensor::{Meta, PoolConfig, TensorPool, TensorRef};

const ROLE: &str = "HORUS_TENSOR_TEST_ROLE";
const ELEMS: usize = 1024;

/// Dispatches peer roles; does nothing in a normal test run.
#[test]
fn peer() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag of this process: a
    // peer never outlives a test that failed.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let ns = std::env::var("HORUS_NAMESPACE").unwrap();
    match role.as_str() {
        "alloc_and_hold" => alloc_and_hold(&ns),
        "attach_and_hold" => attach_and_hold(&ns),
        _ => panic!("unknown role {role}"),
    }
}

/// Allocates a `<u4` tensor `[0, 1, 2 …]`, prints its descriptor, and
/// holds it until stdin closes (or it is killed).
fn alloc_and_hold(ns: &str) {
    let pool = TensorPool::open(ns, 1, small(4)).unwrap();
    let (t, r) = pool
        .alloc_array("<u4", &[ELEMS as u64], Meta::default())
        .unwrap();
    // SAFETY: a freshly allocated slot of ELEMS * 4 bytes, page aligned,
    // which nobody else references yet.
    let data = unsafe { std::slice::from_raw_parts_mut(t.as_ptr().cast::<u32>(), ELEMS) };
    for (k, x) in data.iter_mut().enumerate() {
        *x = k as u32;
    }
    report(&format!("descriptor {}", hex(bytemuck::bytes_of(&r))));
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop((t, pool));
}

/// Attaches the descriptor read from stdin, prints the sum of its
/// elements, and holds it until stdin closes.
fn attach_and_hold(ns: &str) {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let r: TensorRef = bytemuck::pod_read_unaligned(&unhex(line.trim()));
    let pool = TensorPool::open(ns, r.pool_id, PoolConfig::default()).unwrap();
    let t = pool.attach(&r).unwrap();
    report(&format!("sum {} refcount {}", sum(t.bytes()), t.refcount()));
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop((t, pool));
}

/// One line to the test that spawned us (written past libtest's output
/// capture, on a line of its own).
fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n{line}").unwrap();
    out.flush().unwrap();
}

fn sum(bytes: &[u8]) -> u64 {
    bytes
        .chunks_exact(4)
        .map(|c| u64::from(u32::from_ne_bytes(c.try_into().unwrap())))
        .sum()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// This test binary as a peer playing `role` in namespace `ns`.
fn spawn(role: &str, ns: &str) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env("HORUS_NAMESPACE", ns)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

/// The first line of `out` starting with `tag `, without the tag.
fn line(out: &mut BufReader<ChildStdout>, tag: &str) -> String {
    let mut l = String::new();
    loop {
        l.clear();
        assert!(
            out.read_line(&mut l).unwrap() > 0,
            "peer ended before {tag}"
        );
        if let Some(rest) = l.trim().strip_prefix(&format!("{tag} ")) {
            return rest.to_owned();
        }
    }
}

const EXPECTED_SUM: u64 = (ELEMS as u64 - 1) * ELEMS as u64 / 2;

#[test]
fn a_killed_holders_references_are_reclaimed_and_the_last_one_out_unlinks() {
    let ns = unique_ns("kill");
    let (mut child, mut out) = spawn("alloc_and_hold", &ns);
    let r: TensorRef = bytemuck::pod_read_unaligned(&unhex(&line(&mut out, "descriptor")));

    // Read in another process: the data the allocator wrote, no copy.
    let pool = TensorPool::open(&ns, r.pool_id, PoolConfig::default()).unwrap();
    let t = pool.attach(&r).unwrap();
    assert_eq!(sum(t.bytes()), EXPECTED_SUM);
    assert_eq!((t.refcount(), pool.holders()), (2, 2));

    // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    child.wait().unwrap();
    assert_eq!(pool.holders(), 2, "nobody reclaimed the dead holder yet");
    assert_eq!(pool.reclaim_dead(), 1);
    assert_eq!(pool.reclaim_dead(), 0, "reclaimed once");
    assert_eq!((t.refcount(), pool.holders()), (1, 1));
    assert_eq!(pool.free_slots(), 3);
    drop(t);
    assert_eq!(pool.free_slots(), 4, "the dead holder's slot came back");
    let again = pool.alloc(4).unwrap();
    assert!(again.generation() >= 1);
    drop((again, pool));
    assert!(!pool_path(&ns, 1).exists(), "the last one out unlinked it");
}

#[test]
fn a_reader_process_that_leaves_last_unlinks_the_pool() {
    let ns = unique_ns("reader");
    let pool = TensorPool::open(&ns, 1, small(2)).unwrap();
    let (t, r) = pool
        .alloc_array("<u4", &[ELEMS as u64], Meta::default())
        .unwrap();
    // SAFETY: ELEMS u32 of a fresh slot nobody else references yet.
    let data = unsafe { std::slice::from_raw_parts_mut(t.as_ptr().cast::<u32>(), ELEMS) };
    for (k, x) in data.iter_mut().enumerate() {
        *x = k as u32;
    }
    let (mut child, mut out) = spawn("attach_and_hold", &ns);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", hex(bytemuck::bytes_of(&r))).unwrap();
    let got = line(&mut out, "sum");
    assert_eq!(got, format!("{EXPECTED_SUM} refcount 2"));

    drop((t, pool));
    assert!(
        pool_path(&ns, 1).exists(),
        "the reader still holds the pool"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert!(
        !pool_path(&ns, 1).exists(),
        "the reader, last out, unlinked it"
    );
}

#[test]
fn remove_stale_pools_removes_a_pool_whose_holders_all_died() {
    let ns = unique_ns("stale");
    let (mut child, mut out) = spawn("alloc_and_hold", &ns);
    line(&mut out, "descriptor");
    let live = horus_tensor::remove_stale_pools(&ns).unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].fate, horus_tensor::PoolFate::Live { holders: 1 });
    // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    child.wait().unwrap();
    assert!(pool_path(&ns, 1).exists(), "nobody left to unlink it");
    let gone = horus_tensor::remove_stale_pools(&ns).unwrap();
    assert_eq!(gone[0].fate, horus_tensor::PoolFate::Removed);
    assert!(!pool_path(&ns, 1).exists());
}
