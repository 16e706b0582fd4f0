// The driver host against the real services and change feed, with a driver of the test's own under
// the `manual` module name: it counts the connections the host makes and can hold the host's thread
// inside an execute, so changes pile up in the feed and the host handles them late, as under load.
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "drivers/catalog.hpp"
#include "drivers/driver_host.hpp"
#include "pipeline/doc_fields.hpp"
#include "support/action_fixture.hpp"

namespace fl::testing {
namespace {

// What the test sees of the host's work; every member guarded by `mutex`.
struct host_log {
  std::mutex mutex;
  std::condition_variable changed;
  int made = 0;                                       // connections made
  int destroyed = 0;                                  // connections the host dropped
  std::vector<std::pair<int, std::string>> executed;  // (connection number, action id)
  bool hold_next_execute = false;
  bool holding = false;

  // polling a condition: the host's thread is inside an execute, waiting for release()
  bool wait_holding() {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(20), [&] { return holding; });
  }
  // Also cancels a hold not yet taken, so the host's thread is never held after the test is done.
  void release() {
    std::lock_guard lock(mutex);
    hold_next_execute = false;
    holding = false;
    changed.notify_all();
  }
};

class logged_connection final : public drivers::driver_connection {
 public:
  logged_connection(host_log& log, drivers::driver_context& ctx) : log_(log), ctx_(ctx) {
    std::lock_guard lock(log_.mutex);
    number_ = ++log_.made;
  }
  ~logged_connection() override {
    std::lock_guard lock(log_.mutex);
    ++log_.destroyed;
  }
  logged_connection(const logged_connection&) = delete;
  logged_connection& operator=(const logged_connection&) = delete;

  void execute(const json::object& action, const json::object& /*interface_doc*/) override {
    const uuid mandate = pipeline::id_field(action, "mandate_id");
    const uuid id = pipeline::id_field(action, "id");
    {
      std::unique_lock lock(log_.mutex);
      log_.executed.emplace_back(number_, id.str());
      if (log_.hold_next_execute) {
        log_.hold_next_execute = false;
        log_.holding = true;
        log_.changed.notify_all();
        log_.changed.wait(lock, [&] { return !log_.holding; });
      }
    }
    drivers::log_unresolved(
        ctx_.actions.move(mandate, id, pipeline::action_state::executed,
                          pipeline::action_event{"executed_by_test_driver", "executed", "done", nullptr}),
        id, "the test driver's outcome");
  }

 private:
  host_log& log_;
  drivers::driver_context& ctx_;
  int number_ = 0;
};

class logged_driver final : public drivers::driver {
 public:
  explicit logged_driver(host_log& log) : log_(log) {}
  std::string_view module() const override { return "manual"; }
  std::string_view display_name() const override { return "logged"; }
  std::string_view description() const override { return "counts what the host does"; }
  std::vector<pipeline::action_type_info> action_types() const override { return {}; }
  pipeline::field_errors check_instance_opts(const json::object& /*opts*/) const override { return {}; }
  pipeline::field_errors check_interface_opts(const json::object& /*opts*/,
                                              const json::object& /*instance_opts*/) const override {
    return {};
  }
  pipeline::field_errors check_action_opts(std::string_view /*type*/, const json::object& /*opts*/) const override {
    return {};
  }
  std::unique_ptr<drivers::driver_connection> connect(const json::object& /*instance*/,
                                                      drivers::driver_context& ctx) const override {
    return std::make_unique<logged_connection>(log_, ctx);
  }

 private:
  host_log& log_;
};

class driver_host_changes : public action_fixture {
 protected:
  void SetUp() override {
    action_fixture::SetUp();
    app_->drivers.stop();  // this test's host runs the instances instead
    std::vector<std::unique_ptr<drivers::driver>> list;
    list.push_back(std::make_unique<logged_driver>(log_));
    catalog_ = std::make_unique<drivers::driver_catalog>(std::move(list));
    host_ = std::make_unique<drivers::driver_host>(
        *catalog_, drivers::driver_context{app_->records, app_->actions, app_->packet_writes, app_->timers},
        *app_->feed);
    host_->start();
  }
  void TearDown() override {
    log_.release();
    host_.reset();
    action_fixture::TearDown();
  }

  reply set_enabled(const std::string& instance, bool enabled) const {
    return call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + instance, superadmin_,
                json::object{{"driver_instance", json::object{{"enabled", enabled}}}});
  }
  std::vector<std::pair<int, std::string>> executed() {
    std::lock_guard lock(log_.mutex);
    return log_.executed;
  }

  host_log log_;
  std::unique_ptr<drivers::driver_catalog> catalog_;
  std::unique_ptr<drivers::driver_host> host_;
};

// Under load the host reads a disable, the action created meanwhile and the enable that followed in
// one go; by then the stored instance is enabled again. The host used to drop the connection and make
// a new one for each change: the second drop took the action the first new connection had just been
// given (the mqtt_client driver failed it as "stopped").
TEST_F(driver_host_changes, a_disable_read_after_its_enable_keeps_the_running_connection_and_its_actions) {
  {
    std::lock_guard lock(log_.mutex);
    ASSERT_EQ(log_.made, 1);  // the fixture's manual instance, connected by start()
    log_.hold_next_execute = true;
  }
  const std::string first = create_packet_action(device_).id();
  ASSERT_TRUE(log_.wait_holding());  // the host's thread is busy: the next changes wait in the feed
  ASSERT_EQ(set_enabled(manual_, false).status, 200);
  const std::string second = create_packet_action(device_).id();
  ASSERT_EQ(set_enabled(manual_, true).status, 200);
  log_.release();
  const std::string third = create_packet_action(device_).id();  // handled after every change above
  ASSERT_TRUE(eventually([&] { return executed().size() >= 3; })) << executed().size();
  EXPECT_EQ(executed(), (std::vector<std::pair<int, std::string>>{{1, first}, {1, second}, {1, third}}));
  {
    std::lock_guard lock(log_.mutex);
    EXPECT_EQ(log_.made, 1);
    EXPECT_EQ(log_.destroyed, 0);
  }
  for (const auto& id : {first, second, third}) EXPECT_EQ(state_of(id), "executed") << id;
}

// The disable is still what is stored when the host reads it: the connection goes, and a new one
// is made on the enable.
TEST_F(driver_host_changes, a_disable_that_still_holds_when_read_drops_the_connection_and_actions_wait) {
  ASSERT_EQ(set_enabled(manual_, false).status, 200);
  const std::string waiting = create_packet_action(device_).id();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(log_.mutex);
    return log_.destroyed == 1;
  }));
  EXPECT_EQ(state_of(waiting), "pending");
  ASSERT_EQ(set_enabled(manual_, true).status, 200);
  ASSERT_TRUE(eventually([&] { return state_of(waiting) == "executed"; })) << state_of(waiting);
  EXPECT_EQ(executed(), (std::vector<std::pair<int, std::string>>{{2, waiting}}));
}

}  // namespace
}  // namespace fl::testing
