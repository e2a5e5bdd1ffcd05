// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// A section of the running program's own ELF file, read from /proc/self/exe: what the
// grader adds to a linked program (objcopy --add-section) reaches its driver with it,
// wherever and however it runs (harness/host/student_state.h).
#pragma once
#include <elf.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace scanlab {

// The contents of the section named `wanted` ("" when the program has none).
inline std::string programSection(const std::string& wanted) {
    std::ifstream f("/proc/self/exe", std::ios::binary);
    Elf64_Ehdr header{};
    if (!f.read(reinterpret_cast<char*>(&header), sizeof header) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shstrndx >= header.e_shnum)
        return "";
    std::vector<Elf64_Shdr> sections(header.e_shnum);
    f.seekg(std::streamoff(header.e_shoff));
    if (!f.read(reinterpret_cast<char*>(sections.data()),
                std::streamsize(sections.size() * sizeof(Elf64_Shdr))))
        return "";
    auto contents = [&](const Elf64_Shdr& s) {
        std::string bytes(s.sh_type == SHT_NOBITS ? 0 : size_t(s.sh_size), '\0');
        f.clear();
        f.seekg(std::streamoff(s.sh_offset));
        return f.read(bytes.data(), std::streamsize(bytes.size())) ? bytes : std::string();
    };
    const std::string names = contents(sections[header.e_shstrndx]);
    for (const Elf64_Shdr& s : sections)
        if (s.sh_name < names.size() && wanted == names.c_str() + s.sh_name) return contents(s);
    return "";
}

}  // namespace scanlab
