pub mod appwrapper;
