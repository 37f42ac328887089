//! The README's example is examples/readme.rs, word for word, and runs.

/// The first ```rust block of bindings/rust/README.md.
fn readme_example_block() -> String {
    let readme = include_str!("../../README.md");
    let start = readme.find("```rust\n").expect("README.md has a ```rust block") + "```rust\n".len();
    let len = readme[start..].find("```\n").expect("the ```rust block ends");
    readme[start..start + len].to_string()
}

#[test]
fn the_readme_block_is_the_example_file() {
    assert_eq!(
        readme_example_block(),
        include_str!("../examples/readme.rs"),
        "bindings/rust/README.md's example and ravel-kv/examples/readme.rs differ: make them equal"
    );
}

mod readme_example {
    include!("../examples/readme.rs");

    #[test]
    fn the_example_runs() {
        main().unwrap();
    }
}
