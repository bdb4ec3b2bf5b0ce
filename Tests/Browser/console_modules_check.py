"""The web console's modules as a layering (ConsoleTests): every import of console/*.js
names a file of console/, no module imports itself through others, and none is over
MAX_LINES lines. Prints one line per check; exits non-zero when one fails, naming each
cycle (a.js -> b.js -> a.js) and each module too long.

usage: console_modules_check.py [CONSOLE_DIR]   (default: console/ of this checkout)
"""

import os
import re
import sys

# A module this long is doing more than one thing: split it by what the parts do.
MAX_LINES = 400

# Static imports and re-exports (`import { a } from './a.js?v=…'`, `export * from …`,
# `import './a.js'`) and dynamic ones (`import('./a.js')`), over several lines too.
IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]"""
    r"""|^\s*import\s*['"]([^'"]+)['"]"""
    r"""|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)""",
    re.MULTILINE,
)


def imports_of(text):
    """The specifiers a module's text imports, in order."""
    return [next(group for group in match.groups() if group) for match in IMPORT.finditer(text)]


def module_graph(directory):
    """Each module's name, its imports as module names, and its line count; plus the
    imports that name no module of the directory."""
    names = sorted(name for name in os.listdir(directory) if name.endswith(".js"))
    graph, lines, unknown = {}, {}, []
    for name in names:
        with open(os.path.join(directory, name), encoding="utf-8") as file:
            text = file.read()
        lines[name] = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        graph[name] = []
        for specifier in imports_of(text):
            path = specifier.split("?", 1)[0]
            target = path[2:] if path.startswith("./") else None
            if target not in names:
                unknown.append(f"{name} imports {specifier}, which is not a module of console/")
            elif target not in graph[name]:
                graph[name].append(target)
    return graph, lines, unknown


def cycles(graph):
    """Each strongly connected part of the graph that holds a cycle (Tarjan): its modules,
    and its shortest cycle through the first of them, the first repeated at the end."""
    index, low, on_stack, stack, parts = {}, {}, set(), [], []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.add(member)
                if member == node:
                    break
            if len(part) > 1 or node in graph[node]:
                parts.append(part)

    for node in graph:
        if node not in index:
            connect(node)

    found = []
    for part in parts:
        start = min(part)
        # The shortest way from `start` back to itself inside the part.
        previous, frontier, back = {start: None}, [start], None
        while frontier and back is None:
            following = []
            for node in frontier:
                for target in graph[node]:
                    if target == start:
                        back = node
                        break
                    if target in part and target not in previous:
                        previous[target] = node
                        following.append(target)
                if back is not None:
                    break
            frontier = following
        path, node = [start], back
        while node is not None and node != start:
            path.insert(1, node)
            node = previous[node]
        found.append((sorted(part), path + [start]))
    return sorted(found)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "console")
    graph, lines, unknown = module_graph(directory)
    failures = list(unknown)
    failures += [
        f"import cycle among {len(part)} modules ({', '.join(part)}), such as {' -> '.join(cycle)}"
        for part, cycle in cycles(graph)
    ]
    failures += [
        f"{name} has {count} lines, over {MAX_LINES}: split it by what its parts do"
        for name, count in sorted(lines.items()) if count > MAX_LINES
    ]
    if failures:
        for failure in failures:
            print(f"FAIL {failure}")
        sys.exit(1)
    edges = sum(len(targets) for targets in graph.values())
    print(f"ok {len(graph)} modules, {edges} imports, every one naming a module of console/")
    print("ok no module imports itself through others")
    longest = max(lines, key=lines.get)
    print(f"ok no module over {MAX_LINES} lines (the longest, {longest}, has {lines[longest]})")


if __name__ == "__main__":
    main()
