//! The machine a benchmark ran on, as every `--json` document records it.

use serde::{Deserialize, Serialize};

/// The machine the run happened on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Online logical CPUs (`processor` entries in `/proc/cpuinfo`).
    pub cores: usize,
    /// CPUs this process may use (its affinity mask).
    pub usable_cpus: usize,
    /// `uname`: sysname, release, version, machine.
    pub kernel: String,
}

impl Machine {
    /// Reads `/proc/cpuinfo` and `uname`.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
            .map_or_else(|| "unknown".to_owned(), |(_, v)| v.trim().to_owned());
        let cores = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count();
        Self {
            cpu_model,
            cores,
            usable_cpus: crate::affinity::available_cpus(),
            kernel: uname(),
        }
    }
}

fn uname() -> String {
    let mut uts = std::mem::MaybeUninit::<libc::utsname>::uninit();
    // SAFETY: `uname` fills the whole struct on success; we read it only then.
    if unsafe { libc::uname(uts.as_mut_ptr()) } != 0 {
        return "unknown".to_owned();
    }
    // SAFETY: initialised by the successful call above.
    let uts = unsafe { uts.assume_init() };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        field(&uts.sysname),
        field(&uts.release),
        field(&uts.version),
        field(&uts.machine)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_is_detected() {
        let m = Machine::detect();
        assert!(m.cores >= 1);
        assert!(!m.kernel.is_empty());
    }
}
