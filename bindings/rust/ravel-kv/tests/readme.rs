//! The README's examples are examples/readme.rs and
//! examples/transactions.rs, word for word, and run.

/// The Nth (from 0) ```rust block of bindings/rust/README.md.
fn readme_block(n: usize) -> String {
    let readme = include_str!("../../README.md");
    let mut rest = readme;
    for _ in 0..n {
        let at = rest.find("```rust\n").expect("README.md has enough ```rust blocks");
        rest = &rest[at + "```rust\n".len()..];
    }
    let start = rest.find("```rust\n").expect("README.md has a ```rust block") + "```rust\n".len();
    let len = rest[start..].find("```\n").expect("the ```rust block ends");
    rest[start..start + len].to_string()
}

fn readme_example_block() -> String {
    readme_block(0)
}

#[test]
fn the_second_readme_block_is_the_transactions_example() {
    assert_eq!(
        readme_block(1),
        include_str!("../examples/transactions.rs"),
        "bindings/rust/README.md's transactions example and ravel-kv/examples/transactions.rs differ"
    );
}

mod transactions_example {
    include!("../examples/transactions.rs");

    #[test]
    fn the_example_runs() {
        main().unwrap();
    }
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

#[test]
fn the_third_readme_block_is_the_operations_example() {
    assert_eq!(
        readme_block(2),
        include_str!("../examples/operations.rs"),
        "bindings/rust/README.md's operations example and ravel-kv/examples/operations.rs differ"
    );
}

mod operations_example {
    include!("../examples/operations.rs");

    #[test]
    fn the_example_runs() {
        main().unwrap();
    }
}
