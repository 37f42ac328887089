use ravel::{Db, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("ravel-readme-{}", std::process::id()));
    let db = Db::open(&dir, &Options::new()?.with("create_if_missing", true)?)?;
    db.put(b"hello", b"world")?;
    assert_eq!(db.get(b"hello")?, Some(b"world".to_vec()));
    for entry in db.range(None, None)? {
        let (key, value) = entry?;
        println!("{} = {}", String::from_utf8_lossy(&key), String::from_utf8_lossy(&value));
    }
    db.close()?;
    Ok(std::fs::remove_dir_all(&dir)?)
}
