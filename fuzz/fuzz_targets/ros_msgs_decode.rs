//! ROS 2 CDR bytes through the generated types of horus-ros-msgs, differentially against
//! horus-idl's dynamic decoder.
//!
//! The first two bytes pick the type (any of `horus_ros_msgs::REGISTRY`), the rest is the
//! message (encapsulation header included). Generated decoding and generated viewing must
//! accept and refuse the same bytes with the same error, never panic; what they accept
//! re-encodes stably; and the dynamic decoder accepts exactly what they accept, reading
//! a value whose dynamic encoding is the generated encoding (after setting ROS 2's
//! placeholder byte of empty structures to 0: generated types do not keep it, they
//! write 0 as ROS 2 does).
#![no_main]

use std::sync::OnceLock;

use horus_cdr::RoundTripError;
use horus_idl::cdr::{decode, encode, CdrValue};
use horus_idl::{InterfaceSet, Resolved, ResolvedBase, TypeName};
use horus_ros_msgs::REGISTRY;
use libfuzzer_sys::fuzz_target;

fn resolved() -> &'static Resolved {
    static R: OnceLock<Resolved> = OnceLock::new();
    R.get_or_init(|| {
        InterfaceSet::standard()
            .expect("vendored packages load")
            .resolve()
            .expect("vendored packages resolve")
    })
}

/// `v` (of structure `name`) with every placeholder member set to 0.
fn zero_placeholders(r: &Resolved, name: &TypeName, v: &mut CdrValue) {
    let (Some(def), CdrValue::Struct(fields)) = (r.get_struct(name), v) else {
        return;
    };
    for (m, (_, fv)) in def.members.iter().zip(fields.iter_mut()) {
        if m.placeholder {
            *fv = CdrValue::UInt(0);
        }
        if let ResolvedBase::Nested(n) = &m.member_type.base {
            match fv {
                CdrValue::Array(items) => {
                    for item in items {
                        zero_placeholders(r, n, item);
                    }
                }
                item => zero_placeholders(r, n, item),
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [a, b, msg @ ..] = data else {
        return;
    };
    let t = &REGISTRY[u16::from_le_bytes([*a, *b]) as usize % REGISTRY.len()];
    let decoded = (t.reencode)(msg);
    let viewed = (t.view_reencode)(msg);
    assert_eq!(decoded, viewed, "{}: decoding and viewing disagree", t.type_name);
    let name = TypeName::parse(t.type_name).expect("registry names are full names");
    let dynamic = decode(resolved(), &name, msg);
    match decoded {
        Ok(bytes) => {
            assert_eq!(
                (t.reencode)(&bytes).as_ref(),
                Ok(&bytes),
                "{}: re-encoding is not stable",
                t.type_name
            );
            let mut value = dynamic.unwrap_or_else(|e| {
                panic!("{}: generated code accepts what horus_idl refuses: {e}", t.type_name)
            });
            zero_placeholders(resolved(), &name, &mut value);
            let reference = encode(resolved(), &name, &value).expect("a decoded value encodes");
            assert_eq!(reference, bytes, "{}: generated and dynamic codecs differ", t.type_name);
        }
        Err(RoundTripError::Encode(e)) => {
            panic!("{}: a decoded message does not encode: {e}", t.type_name)
        }
        Err(e) => assert!(
            dynamic.is_err(),
            "{}: horus_idl accepts what generated code refuses: {e}",
            t.type_name
        ),
    }
});
