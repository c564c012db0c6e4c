// Package envpack packs a Python environment (a venv or a conda env) into a
// .tar.gz that keeps working after YARN unpacks it into a directory of its
// own on every node (an ARCHIVE LocalResource lands in ./<link name>/), and
// checks on the node that it can run there.
//
// # What Pack does, for both kinds
//
//   - Entries are relative to the environment's root, in lexical order, with
//     a fixed mtime (2000-01-01), owner 0 without names, modes reduced to
//     0755 (anything executable) or 0644 and directories 0755; the gzip
//     header has no name and no time; compression is pgzip at a fixed block
//     size and level. So the same environment gives the same bytes on any
//     machine with the same tfyarn build, and the content-addressed HDFS
//     cache (keyed by the archive's sha256) uploads it once.
//   - __pycache__ directories and *.pyc files are left out: they embed source
//     paths and mtimes, and Python recompiles what it imports.
//   - Scripts in bin/ whose shebang names an interpreter inside the
//     environment by absolute path are rewritten: Python scripts get a
//     #!/bin/sh header that execs the python beside the script (see
//     rewriteShebang), other interpreters #!/usr/bin/env NAME.
//   - Symlinks stay symlinks. Absolute links into the environment become
//     relative; links out of it are kept and listed (Manifest.ExternalSymlinks).
//     A link that loops (to a directory holding it, or in a cycle of links) is
//     refused (LoopError): YARN's launch script fails on it (CheckEnvLinks).
//   - Other text files that name the old prefix (activate scripts, .pc
//     files, _sysconfigdata, ...) are listed in the manifest, and Relocate
//     rewrites them on the node, as conda-pack's conda-unpack does. Binary
//     files that embed the prefix are listed but not rewritten: that is out
//     of scope (conda-pack can only do it when the new prefix is not longer).
//   - The manifest is stored in the archive as .envpack.json (last entry).
//
// # venv
//
// A venv (pyvenv.cfg) is not a full Python: bin/python is a symlink to the
// base interpreter it was created from (pyvenv.cfg's home), and even a venv
// made with --copies loads the standard library from that base installation.
// So every node must have the same base interpreter at the same path, with
// the same major.minor version (the compiled packages in site-packages are
// built for it): CheckRuntime verifies exactly that before a task starts and
// says what is missing in one line. Pure-Python and manylinux wheels need
// nothing else.
//
// # conda
//
// A conda env (conda-meta/) carries its own interpreter and libraries and is
// relocatable once its shebangs and text files are fixed, except binaries
// with the build prefix compiled in (rare in Python packages; listed in
// Manifest.PrefixBinaryFiles, and they keep working only where that prefix
// exists).
package envpack
