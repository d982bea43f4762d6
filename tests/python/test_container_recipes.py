"""The container recipes (scripts/container/Dockerfile and mgbench.def) against the tree, since
no image can be built here: every file they copy exists, they copy every directory the build
adds, they build with the command scripts/run.sh (the README's) builds with and copy the binary
it runs, they install every required piece of scripts/setup.sh, and the two recipes agree."""
import os
import re
import shlex
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCKERFILE = os.path.join(ROOT, "scripts", "container", "Dockerfile")
DEFINITION = os.path.join(ROOT, "scripts", "container", "mgbench.def")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def logical_lines(text):
    """Lines with their backslash continuations joined, comments dropped."""
    lines, current = [], ""
    for line in text.splitlines():
        if line.strip().startswith("#") and not current:
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        lines.append((current + line).strip())
        current = ""
    return [line for line in lines if line]


def docker_stages(text):
    """[(base image, [instruction lines])] per FROM, with ${ARG} defaults substituted."""
    args = {}
    stages = []
    for line in logical_lines(text):
        keyword, _, rest = line.partition(" ")
        if keyword == "ARG" and "=" in rest and not stages:
            name, _, value = rest.partition("=")
            args[name] = value
        rest = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), rest)
        if keyword == "FROM":
            stages.append((rest.split()[0], []))
        elif stages:
            stages[-1][1].append((keyword, rest))
    return stages


def definition_stages(text):
    """[(base image, {section: [lines]})] per Bootstrap block of an Apptainer definition."""
    stages, section = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and section is None):
            continue
        if stripped.startswith("Bootstrap:"):
            stages.append((None, {}))
            section = None
        elif stripped.startswith("From:") and section is None:
            stages[-1] = (stripped.split(":", 1)[1].strip(), stages[-1][1])
        elif stripped.startswith("%"):
            section = stripped
            stages[-1][1][section] = []
        elif section is not None:
            stages[-1][1][section].append(line)
    return stages


def run_sh_build():
    """The build command and the binary of scripts/run.sh."""
    lines = [line.strip() for line in read(os.path.join(ROOT, "scripts", "run.sh")).splitlines()]
    build = [line for line in lines if line.startswith("scripts/setup.sh")]
    binary = [line.split()[1] for line in lines if line.startswith("exec ")]
    assert len(build) == 1 and len(binary) == 1, "scripts/run.sh changed shape"
    return build[0].replace(">&2", "").strip(), binary[0]


def required_apt_packages():
    """The apt packages of scripts/setup.sh's required pieces (CUDA pieces excluded)."""
    text = read(os.path.join(ROOT, "scripts", "setup.sh"))
    table = text.split("PIECES='", 1)[1].split("'", 1)[0]
    packages = set()
    for row in table.strip().splitlines():
        fields = row.split("|")
        if fields[1] == "required":
            packages.update(fields[2].split())
    return packages


def apt_installs(command):
    """The packages an `apt-get install` in a shell command names."""
    words = shlex.split(command.replace("&&", " && "))
    packages, taking = [], False
    for word in words:
        if word == "install":
            taking = True
        elif word in ("&&", ";"):
            taking = False
        elif taking and not word.startswith("-"):
            packages.append(word)
    return packages


def top_level_subdirectories():
    """The directories the top-level CMakeLists.txt adds (their first path component)."""
    text = read(os.path.join(ROOT, "CMakeLists.txt"))
    return {d.split("/")[0] for d in re.findall(r"add_subdirectory\((\S+?)\)", text)}


class Recipes(unittest.TestCase):
    def setUp(self):
        self.docker = docker_stages(read(DOCKERFILE))
        self.apptainer = definition_stages(read(DEFINITION))
        self.build_command, self.binary = run_sh_build()

    def docker_copies(self):
        """(sources, destination) of every COPY of the build stage from the context."""
        return [shlex.split(rest) for keyword, rest in self.docker[0][1] if keyword == "COPY"]

    def post_installs(self, stage):
        """The packages the %post of an Apptainer stage installs."""
        commands = logical_lines("\n".join(self.apptainer[stage][1]["%post"]))
        return [p for command in commands for p in apt_installs(command)]

    def definition_files(self, section):
        return [line.split() for line in self.apptainer[0][1].get(section, [])] if \
            section == "%files" else [line.split() for line in self.apptainer[1][1][section]]

    def test_two_stages_from_the_same_cuda_images(self):
        self.assertEqual(len(self.docker), 2)
        self.assertEqual(len(self.apptainer), 2)
        for (docker_image, _), (def_image, _), kind in zip(self.docker, self.apptainer,
                                                           ("devel", "runtime")):
            self.assertRegex(docker_image, rf"^nvidia/cuda:[0-9.]+-{kind}-ubuntu[0-9.]+$")
            self.assertEqual(docker_image, def_image)

    def test_every_copied_file_exists(self):
        sources = [s for copy in self.docker_copies() for s in copy[:-1]]
        sources += [entry[0] for entry in self.definition_files("%files")]
        self.assertGreater(len(sources), 5)
        for source in sources:
            self.assertTrue(os.path.exists(os.path.join(ROOT, source)), source)
        ignored = read(DOCKERFILE + ".dockerignore").split()
        for source in sources:
            self.assertNotIn(source.split("/")[0], ignored, source)

    def test_every_directory_the_build_adds_is_copied(self):
        docker = {s.rstrip("/") for copy in self.docker_copies() for s in copy[:-1]}
        apptainer = {entry[0] for entry in self.definition_files("%files")}
        needed = top_level_subdirectories() | {"cmake", "scripts", "CMakeLists.txt",
                                               "CMakePresets.json"}
        self.assertIn("harness", needed)
        self.assertLessEqual(needed, docker)
        self.assertLessEqual(needed, apptainer)
        self.assertEqual(docker, apptainer)

    def test_built_with_run_sh_command(self):
        self.assertEqual(self.build_command, "scripts/setup.sh release mgbench")
        docker_runs = [rest for keyword, rest in self.docker[0][1] if keyword == "RUN"]
        self.assertTrue(any(run.endswith(self.build_command) for run in docker_runs),
                        docker_runs)
        post = " ".join(self.apptainer[0][1]["%post"])
        self.assertIn(self.build_command, post)

    def test_the_binary_run_sh_runs_is_the_one_copied(self):
        built = "/src/" + self.binary
        docker = [shlex.split(rest) for keyword, rest in self.docker[1][1]
                  if keyword == "COPY" and rest.startswith("--from=build")]
        self.assertIn([f"--from=build", built, "/usr/local/bin/mgbench"], docker)
        self.assertIn([built, "/usr/local/bin/mgbench"], self.definition_files("%files from build"))
        for copy in docker:  # anything else copied from the build stage is a file of the tree
            if copy[1] != built:
                self.assertTrue(os.path.isfile(os.path.join(ROOT, copy[1][len("/src/"):])))

    def test_build_stage_installs_every_required_piece(self):
        required = required_apt_packages()
        self.assertIn("libsqlite3-0", required)
        docker = [p for keyword, rest in self.docker[0][1] if keyword == "RUN"
                  for p in apt_installs(rest)]
        apptainer = self.post_installs(0)
        self.assertLessEqual(required, set(docker))
        self.assertEqual(sorted(docker), sorted(apptainer))
        self.assertIn("libopenmpi-dev", docker)  # --launcher mpirun is built in

    def test_runtime_stage_has_nccl_mpi_and_sqlite(self):
        docker = [p for keyword, rest in self.docker[1][1] if keyword == "RUN"
                  for p in apt_installs(rest)]
        apptainer = self.post_installs(1)
        for package in ("libnccl2", "openmpi-bin", "libsqlite3-0", "python3"):
            self.assertIn(package, docker)
        self.assertEqual(sorted(docker), sorted(apptainer))


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    unittest.main(verbosity=2)
