import Spindle
import SpindleAtoms

/// One todo.
struct Todo: Sendable, Equatable {
    var title: String
    var done = false
}

/// The todo list's state: the todos, and how many events it has reduced
/// (so the command line can wait until a command has been applied).
struct TodoList: Sendable, Equatable {
    var todos: [Todo] = []
    var revision = 0
}

enum TodoEvent: Sendable {
    case add(String)
    case toggle(index: Int)
    case remove(index: Int)
    case clearDone
}

/// The todo list as a loop: a spin atom, started when first watched.
struct TodosAtom: SpinAtom, Hashable {
    func spin(context: Context) -> Spin<TodoList, TodoEvent> {
        Spin(initialState: TodoList(), feedbacks: [], reducer: Reducer { list, event in
            var list = list
            list.revision += 1
            switch event {
            case .add(let title):
                list.todos.append(Todo(title: title))
            case .toggle(let index) where list.todos.indices.contains(index):
                list.todos[index].done.toggle()
            case .remove(let index) where list.todos.indices.contains(index):
                list.todos.remove(at: index)
            case .clearDone:
                list.todos.removeAll(where: \.done)
            case .toggle, .remove:
                break  // no such todo: the revision still moves, so the caller stops waiting
            }
            return list
        })
    }
}

enum Filter: String, Sendable, CaseIterable {
    case all, active, done
}

/// Which todos the list shows.
struct FilterAtom: StateAtom, Hashable, KeepAlive {
    func defaultValue(context: Context) -> Filter { .all }
}

/// The todos the filter lets through, with their positions in the list.
struct FilteredTodosAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> [IndexedTodo] {
        let todos = try context.watch(TodosAtom().select(\.todos))
        let filter = try context.watch(FilterAtom())
        return todos.enumerated().compactMap { index, todo in
            switch filter {
            case .all: IndexedTodo(index: index, todo: todo)
            case .active: todo.done ? nil : IndexedTodo(index: index, todo: todo)
            case .done: todo.done ? IndexedTodo(index: index, todo: todo) : nil
            }
        }
    }
}

struct IndexedTodo: Sendable, Equatable {
    let index: Int
    let todo: Todo
}

/// How many todos there are, and how many are left.
struct StatsAtom: ValueAtom, Hashable {
    struct Stats: Sendable, Equatable {
        var total = 0
        var left = 0
    }

    func value(context: Context) throws(AtomError) -> Stats {
        let todos = try context.watch(TodosAtom().select(\.todos))
        return Stats(total: todos.count, left: todos.count(where: { !$0.done }))
    }
}

/// The status line: "3 of 7 todos left, filter: active".
struct SummaryAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> String {
        let stats = try context.watch(StatsAtom())
        let filter = try context.watch(FilterAtom())
        return "\(stats.left) of \(stats.total) todos left, filter: \(filter.rawValue)"
    }
}
