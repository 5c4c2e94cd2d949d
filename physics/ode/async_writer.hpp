#pragma once
// A host thread that runs file-writing jobs in order. At most two batches are in flight (one
// being written, one queued), so the stepping loop only waits when the disk is slower than the
// model for two whole batches: double buffering. The first job that fails stops the writing:
// later jobs are dropped, and the failure is rethrown once, by the next submit() or flush().
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace hayate::ode {

class AsyncWriter {
 public:
  AsyncWriter() : thread_([this] { loop(); }) {}
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;
  ~AsyncWriter() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void submit(std::function<void()> job) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return jobs_.size() + busy_ < 2; });
    rethrow(lock);
    if (failed_) return;
    jobs_.push_back(std::move(job));
    wake_.notify_all();
  }

  // Waits until every submitted job has run; rethrows the first failure of a job.
  void flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return jobs_.empty() && busy_ == 0; });
    rethrow(lock);
  }

 private:
  void rethrow(std::unique_lock<std::mutex>&) {
    if (error_) {
      auto e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      if (failed_) {
        done_.notify_all();
        continue;
      }
      busy_ = 1;
      lock.unlock();
      try {
        job();
      } catch (...) {
        lock.lock();
        if (!failed_) error_ = std::current_exception();
        failed_ = true;
        lock.unlock();
      }
      lock.lock();
      busy_ = 0;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<std::function<void()>> jobs_;
  std::size_t busy_ = 0;
  bool stop_ = false;
  bool failed_ = false;  // a job failed: later ones are dropped
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace hayate::ode
