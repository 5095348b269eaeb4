package buildinfo

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"strings"
)

// ContentID returns the content part of the Go build ID of the executable
// at path: the last of the build ID's slash-separated parts, which the go
// command sets to a hash of the linked file's bytes (the build ID's own
// bytes left out), so two executables with the same content ID are the
// same program. ok is false when the file has no Go build ID (a binary
// linked with -ldflags=-buildid=, or not a Go program) or cannot be read:
// the caller then identifies the file by its bytes.
//
// It reads an ELF file's .note.go.buildid note (through the section
// headers: a few kB, not the file), any other file's "\xff Go build ID:"
// text in its first 32 kB, where the Go linker puts it (Mach-O, PE).
func ContentID(path string) (id string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	full, err := readBuildID(f)
	if err != nil {
		return "", false
	}
	return contentPart(full)
}

// readBuildID reads the Go build ID of the file r.
func readBuildID(r io.ReaderAt) (string, error) {
	head := make([]byte, textIDWithin)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	head = head[:n]
	if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return elfBuildID(r)
	}
	return textBuildID(head)
}

// textIDWithin is how far into a non-ELF file the Go linker's build ID
// text is looked for (cmd/internal/buildid reads as far).
const textIDWithin = 32 << 10

// errNoBuildID says a file holds no Go build ID.
var errNoBuildID = errors.New("no Go build ID")

// elfBuildID reads an ELF file's Go build ID note: name "Go\x00\x00", type
// 4, the ID as its description.
func elfBuildID(r io.ReaderAt) (string, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return "", err
	}
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", errNoBuildID
	}
	note, err := s.Data()
	if err != nil {
		return "", err
	}
	const head = 16 // namesz, descsz, type and the padded name
	if len(note) < head {
		return "", errNoBuildID
	}
	bo := f.ByteOrder
	nameSize, descSize, typ := bo.Uint32(note), bo.Uint32(note[4:]), bo.Uint32(note[8:])
	if nameSize != 4 || typ != 4 || string(note[12:16]) != "Go\x00\x00" || uint64(descSize) > uint64(len(note)-head) {
		return "", errNoBuildID
	}
	return string(note[head : head+int(descSize)]), nil
}

// textBuildID finds the Go linker's `\xff Go build ID: "…"\n \xff` text in
// head.
func textBuildID(head []byte) (string, error) {
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	i := bytes.Index(head, []byte(prefix))
	if i < 0 {
		return "", errNoBuildID
	}
	rest := head[i+len(prefix):]
	j := bytes.Index(rest, []byte(suffix))
	if j < 0 {
		return "", errNoBuildID
	}
	return string(rest[:j]), nil
}

// contentPart is a build ID's last part, if the ID has the go command's
// form: parts joined by slashes (actionID/contentID, four parts for an
// executable), the last a hash in URL-safe base64 of at least 16
// characters (20 today).
func contentPart(full string) (string, bool) {
	i := strings.LastIndexByte(full, '/')
	id := full[i+1:]
	if i < 0 || len(id) < 16 {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return id, true
}
