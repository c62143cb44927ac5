//! The compiled-in standard set (`InterfaceSet::standard_embedded`) is the on-disk one.

use horus_idl::{standard_file, standard_files, InterfaceSet, TypeName, STANDARD_PACKAGES};

#[test]
fn embedded_standard_set_equals_the_files_on_disk() {
    let disk = InterfaceSet::standard().unwrap();
    let embedded = InterfaceSet::standard_embedded().unwrap();
    assert_eq!(disk.len(), embedded.len());
    assert!(disk.len() > 100, "{} interfaces", disk.len());
    for ((dn, ds), (en, es)) in disk.interfaces().zip(embedded.interfaces()) {
        assert_eq!(dn, en);
        assert_eq!(ds, es, "{dn}");
    }
    let (disk, embedded) = (disk.resolve().unwrap(), embedded.resolve().unwrap());
    let names: Vec<&str> = disk.type_names().collect();
    assert_eq!(names, embedded.type_names().collect::<Vec<_>>());
    for name in names {
        assert_eq!(disk.type_hash(name), embedded.type_hash(name), "{name}");
        assert_eq!(
            disk.ros2msg_definition(name),
            embedded.ros2msg_definition(name),
            "{name}"
        );
    }
}

#[test]
fn embedded_files_are_the_vendored_texts_of_the_standard_packages() {
    for f in standard_files() {
        assert!(STANDARD_PACKAGES.contains(&f.package), "{}", f.package);
        let ns = f.kind.namespace();
        let path = horus_idl::standard_interfaces_dir()
            .join(f.package)
            .join(ns)
            .join(format!("{}.{ns}", f.name));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), f.text);
    }
    let header = standard_file(&TypeName::msg("std_msgs", "Header")).unwrap();
    assert_eq!(header.file_name(), "std_msgs/msg/Header.msg");
    assert!(header.text.contains("string frame_id"));
    assert!(standard_file(&TypeName::msg("std_msgs", "Nope")).is_none());
    let empty = TypeName::parse("std_srvs/srv/Empty").unwrap();
    assert_eq!(standard_file(&empty).unwrap().type_name(), empty);
}
